import { fileURLToPath } from 'node:url';
import { kindsCase } from '../kinds.case.js';
import { codex } from './adapter.js';

// Codex has no read or fetch tool of its own: reads and fetches go through the shell (wave2.md §5).
kindsCase(codex, fileURLToPath(new URL('./fixtures/kinds', import.meta.url)), {
  shell: {
    tool: 'Bash',
    kind: 'shell',
    args: { command: 'cd /Users/me/project && git push --force origin main', cwd: '/Users/me/project' },
  },
  edit: {
    tool: 'apply_patch',
    kind: 'file.edit',
    args: { path: 'src/app.ts', paths: ['src/app.ts', 'src/new.ts'] },
  },
  write: {
    tool: 'apply_patch',
    kind: 'file.write',
    args: { path: 'notes/todo.md', paths: ['notes/todo.md'] },
  },
  mcp: { tool: 'mcp__github__create_issue', kind: 'mcp', args: { server: 'github', tool: 'create_issue' } },
});
