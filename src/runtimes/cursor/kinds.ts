import type { Classified } from '../../gate/kinds.js';
import { type KindTable, serverOf, underscoreMcp } from '../kinds.js';
import { asRecord, type Json, str } from '../shared.js';

/**
 * Cursor's tools: the names the adapter gives its shell and file events (`Shell`, `Read`, `Edit`),
 * and the `preToolUse` matcher names seen in hooks files (`Shell`, `Write`, `StrReplace`, `Edit`,
 * `TabWrite`, `Read`; unconfirmed against Cursor's own page, reference/wave2.md §5).
 */
export const CURSOR_KINDS: KindTable = {
  tools: {
    Shell: { kind: 'shell', args: { command: 'command', cwd: 'cwd' } },
    Write: { kind: 'file.write', args: { path: ['file_path', 'path'] } },
    TabWrite: { kind: 'file.write', args: { path: ['file_path', 'path'] } },
    Edit: { kind: 'file.edit', args: { path: ['file_path', 'path'] } },
    StrReplace: { kind: 'file.edit', args: { path: ['file_path', 'path'] } },
    MultiEdit: { kind: 'file.edit', args: { path: ['file_path', 'path'] } },
    Delete: { kind: 'file.delete', args: { path: ['file_path', 'path'] } },
    Read: { kind: 'file.read', args: { path: ['file_path', 'path'] } },
    Grep: { kind: 'file.read', args: { path: ['path', 'file_path'] } },
    Glob: { kind: 'file.read', args: { path: ['path', 'file_path'] } },
    LS: { kind: 'file.read', args: { path: ['path', 'file_path'] } },
    WebSearch: { kind: 'web.search', args: { query: ['query', 'search_term'] } },
    WebFetch: { kind: 'web.fetch', args: { url: 'url' } },
    Task: { kind: 'agent.delegate' },
  },
  mcp: underscoreMcp,
};

/** Cursor's MCP events name the tool, and the server only by where it runs: its `url` or `command`. */
export function classifyCursor(event: string, p: Json, facts: { tool?: string }): Classified | undefined {
  if (event !== 'beforeMCPExecution' && event !== 'afterMCPExecution') return undefined;
  const server = serverOf(asRecord(p) ?? {});
  const tool = str(facts.tool);
  return { kind: 'mcp', args: { ...(server ? { server } : {}), ...(tool ? { tool } : {}) } };
}
