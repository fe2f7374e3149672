import { fileURLToPath } from 'node:url';
import { kindsCase } from '../kinds.case.js';
import { hermes } from './adapter.js';

const CWD = '/home/user/project';

kindsCase(hermes, fileURLToPath(new URL('./fixtures/kinds', import.meta.url)), {
  shell: { tool: 'terminal', kind: 'shell', args: { command: 'git push --force origin main', cwd: CWD } },
  write: { tool: 'write_file', kind: 'file.write', args: { path: `${CWD}/src/app.ts` } },
  edit: { tool: 'patch', kind: 'file.edit', args: { path: `${CWD}/src/app.ts` } },
  read: { tool: 'read_file', kind: 'file.read', args: { path: `${CWD}/.env` } },
  fetch: {
    tool: 'web_extract',
    kind: 'web.fetch',
    args: { url: 'https://docs.example.com/guide', urls: ['https://docs.example.com/guide'] },
  },
  search: { tool: 'web_search', kind: 'web.search', args: { query: 'hono middleware order' } },
  mcp: { tool: 'mcp_github_create_issue', kind: 'mcp', args: { server: 'github', tool: 'create_issue' } },
});
