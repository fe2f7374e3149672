import { type KindTable, underscoreMcp } from '../kinds.js';

/**
 * Gemini CLI's built-in tools (reference/wave2.md §5). `web_fetch` takes a prompt with the URLs in
 * it (up to 20): they become `urls`, the first `url`. MCP tools are `mcp_<server>_<tool>` (the
 * matcher docs also show `mcp__<server>__<tool>`; both are read).
 */
export const GEMINI_KINDS: KindTable = {
  tools: {
    run_shell_command: { kind: 'shell', args: { command: 'command', cwd: ['dir_path', 'directory'] } },
    write_file: { kind: 'file.write', args: { path: ['file_path', 'absolute_path'] } },
    replace: { kind: 'file.edit', args: { path: ['file_path', 'absolute_path'] } },
    read_file: { kind: 'file.read', args: { path: ['file_path', 'absolute_path'] } },
    read_many_files: { kind: 'file.read', args: { paths: ['paths', 'include'] } },
    glob: { kind: 'file.read', args: { path: ['dir_path', 'path'] } },
    list_directory: { kind: 'file.read', args: { path: ['dir_path', 'path'] } },
    search_file_content: { kind: 'file.read', args: { path: ['dir_path', 'path'] } },
    grep_search: { kind: 'file.read', args: { path: ['dir_path', 'path'] } },
    web_fetch: { kind: 'web.fetch', args: { url: 'url' }, urlsIn: 'prompt' },
    google_web_search: { kind: 'web.search', args: { query: 'query' } },
  },
  mcp: underscoreMcp,
};
