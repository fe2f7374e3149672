import { fileURLToPath } from 'node:url';
import { kindsCase } from '../kinds.case.js';
import { claudeCode } from './adapter.js';

const CWD = '/home/user/my-project';

kindsCase(claudeCode, fileURLToPath(new URL('./fixtures/kinds', import.meta.url)), {
  shell: { tool: 'Bash', kind: 'shell', args: { command: 'git push --force origin main', cwd: CWD } },
  write: { tool: 'Write', kind: 'file.write', args: { path: `${CWD}/src/app.ts` } },
  edit: { tool: 'Edit', kind: 'file.edit', args: { path: `${CWD}/src/app.ts` } },
  read: { tool: 'Read', kind: 'file.read', args: { path: `${CWD}/.env` } },
  fetch: { tool: 'WebFetch', kind: 'web.fetch', args: { url: 'https://docs.example.com/guide' } },
  search: { tool: 'WebSearch', kind: 'web.search', args: { query: 'hono middleware order' } },
  mcp: { tool: 'mcp__github__create_issue', kind: 'mcp', args: { server: 'github', tool: 'create_issue' } },
});
