import { fileURLToPath } from 'node:url';
import { kindsCase } from '../kinds.case.js';
import { cursor } from './adapter.js';

const CWD = '/Users/me/project';

// Cursor's hooks have no fetch or search event (wave2.md §5).
kindsCase(cursor, fileURLToPath(new URL('./fixtures/kinds', import.meta.url)), {
  shell: { tool: 'Shell', kind: 'shell', args: { command: 'git push --force origin main', cwd: CWD } },
  'shell-tool': { tool: 'Shell', kind: 'shell', args: { command: 'git push --force origin main', cwd: CWD } },
  write: { tool: 'Write', kind: 'file.write', args: { path: `${CWD}/src/app.ts` } },
  edit: { tool: 'StrReplace', kind: 'file.edit', args: { path: `${CWD}/src/app.ts` } },
  read: { tool: 'Read', kind: 'file.read', args: { path: `${CWD}/.env` } },
  mcp: { tool: 'create_issue', kind: 'mcp', args: { server: 'mcp.example.com', tool: 'create_issue' } },
});
