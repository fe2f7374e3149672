import { fileURLToPath } from 'node:url';
import { kindsCase } from '../kinds.case.js';
import { openclaw } from './adapter.js';

const CWD = '/home/user/project';

kindsCase(openclaw, fileURLToPath(new URL('./fixtures/kinds', import.meta.url)), {
  shell: { tool: 'exec', kind: 'shell', args: { command: 'git push --force origin main', cwd: CWD } },
  write: { tool: 'write', kind: 'file.write', args: { path: `${CWD}/src/app.ts` } },
  edit: { tool: 'edit', kind: 'file.edit', args: { path: `${CWD}/src/app.ts` } },
  patch: {
    tool: 'apply_patch',
    kind: 'file.edit',
    args: { path: 'src/app.ts', paths: ['src/app.ts', 'src/new.ts'] },
  },
  read: { tool: 'read', kind: 'file.read', args: { path: `${CWD}/.env` } },
  fetch: { tool: 'web_fetch', kind: 'web.fetch', args: { url: 'https://docs.example.com/guide' } },
  search: { tool: 'web_search', kind: 'web.search', args: { query: 'hono middleware order' } },
  mcp: { tool: 'mcp__github__create_issue', kind: 'mcp', args: { server: 'github', tool: 'create_issue' } },
});
