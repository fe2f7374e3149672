import { type KindTable, underscoreMcp } from '../kinds.js';

/**
 * Hermes's tools by name (its docs' matcher example: `terminal|write_file|patch`). Field names vary
 * across Hermes versions, so each arg lists the names seen (`path`, `file_path`). `execute_code` runs
 * Python, not a shell line, and stays `other`. MCP tools are `mcp_<server>_<tool>`.
 */
export const HERMES_KINDS: KindTable = {
  tools: {
    terminal: { kind: 'shell', args: { command: 'command', cwd: ['workdir', 'cwd'] } },
    write_file: { kind: 'file.write', args: { path: ['path', 'file_path'] } },
    patch: { kind: 'file.edit', args: { path: ['path', 'file_path'] }, patch: 'patch' },
    read_file: { kind: 'file.read', args: { path: ['path', 'file_path'] } },
    search_files: { kind: 'file.read', args: { path: ['path', 'file_path'] } },
    web_search: { kind: 'web.search', args: { query: 'query' } },
    web_extract: { kind: 'web.fetch', args: { urls: 'urls', url: 'url' } },
    browser_navigate: { kind: 'web.fetch', args: { url: 'url' } },
    delegate_task: { kind: 'agent.delegate' },
    send_message: { kind: 'notify' },
  },
  mcp: underscoreMcp,
};
