import { doubleUnderscoreMcp, type KindTable } from '../kinds.js';

/** OpenClaw's canonical tool ids (its plugin docs name `exec`, `apply_patch`, `spawn_agent`, `web_search`). */
export const OPENCLAW_KINDS: KindTable = {
  tools: {
    exec: { kind: 'shell', args: { command: 'command', cwd: ['workdir', 'cwd'] } },
    write: { kind: 'file.write', args: { path: ['path', 'file_path'] } },
    edit: { kind: 'file.edit', args: { path: ['path', 'file_path'] } },
    apply_patch: { kind: 'file.edit', patch: ['input', 'patch'] },
    read: { kind: 'file.read', args: { path: ['path', 'file_path'] } },
    web_fetch: { kind: 'web.fetch', args: { url: 'url' } },
    web_search: { kind: 'web.search', args: { query: 'query' } },
    spawn_agent: { kind: 'agent.delegate' },
    sessions_spawn: { kind: 'agent.delegate' },
    message: { kind: 'notify' },
  },
  mcp: doubleUnderscoreMcp,
};
