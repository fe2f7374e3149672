import { doubleUnderscoreMcp, type KindTable } from '../kinds.js';

/** Claude Code's tools (reference/wave2.md §5; tool inputs per the hooks reference). */
export const CLAUDE_CODE_KINDS: KindTable = {
  tools: {
    Bash: { kind: 'shell', args: { command: 'command' } },
    PowerShell: { kind: 'shell', args: { command: 'command' } },
    Write: { kind: 'file.write', args: { path: 'file_path' } },
    Edit: { kind: 'file.edit', args: { path: 'file_path' } },
    MultiEdit: { kind: 'file.edit', args: { path: 'file_path' } },
    NotebookEdit: { kind: 'file.edit', args: { path: 'notebook_path' } },
    Read: { kind: 'file.read', args: { path: 'file_path' } },
    NotebookRead: { kind: 'file.read', args: { path: 'notebook_path' } },
    Glob: { kind: 'file.read', args: { path: 'path' } },
    Grep: { kind: 'file.read', args: { path: 'path' } },
    LS: { kind: 'file.read', args: { path: 'path' } },
    WebFetch: { kind: 'web.fetch', args: { url: 'url' } },
    WebSearch: { kind: 'web.search', args: { query: 'query' } },
    Task: { kind: 'agent.delegate' },
    Agent: { kind: 'agent.delegate' },
  },
  // mcp__<server>__<tool>; a plugin's server is plugin_<plugin>_<server>.
  mcp: doubleUnderscoreMcp,
};
