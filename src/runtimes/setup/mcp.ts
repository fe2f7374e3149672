import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_BRIDGE_COMMAND, DEFAULT_KEY_ENV, type SettingsScope } from './claude-code.js';

/**
 * The MCP half of `setup claude-code --notify`: a stdio server entry so Claude Code can call
 * `report_progress` and `ask_approval` through `switchboard mcp`. Where Claude Code reads MCP servers
 * (code.claude.com/docs/en/mcp, "scopes"):
 *
 * - project → `.mcp.json` in the project root, `mcpServers`;
 * - local   → `~/.claude.json`, `projects["<project path>"].mcpServers`;
 * - user    → `~/.claude.json`, top-level `mcpServers`.
 *
 * Claude Code expands `${VAR}` in `.mcp.json` (command, args, env, url, headers), so the project file
 * names the agent key as `${SWITCHBOARD_KEY}` and never holds it. That expansion is documented for
 * `.mcp.json` only, so in `~/.claude.json` the key is left out and the server inherits it from the
 * environment Claude Code runs in, as the hook bridge does.
 */

type Json = Record<string, unknown>;

export const MCP_SERVER_NAME = 'switchboard';

export interface McpLocation {
  path: string;
  /** Keys from the file's root to the `mcpServers` object. */
  at: string[];
}

export function mcpConfigLocation(scope: SettingsScope, where: { cwd: string; home: string }): McpLocation {
  if (scope === 'project') return { path: join(where.cwd, '.mcp.json'), at: ['mcpServers'] };
  const path = join(where.home, '.claude.json');
  return scope === 'user'
    ? { path, at: ['mcpServers'] }
    : { path, at: ['projects', where.cwd, 'mcpServers'] };
}

/**
 * `switchboard mcp` run the same way the hooks run the bridge: a custom `--bridge` such as
 * `node /src/switchboard/dist/cli/main.js hook claude-code` gives `node /src/…/main.js mcp`. A bridge
 * that needs a shell (quotes, `$`, pipes) cannot be split into argv, so the plain binary is used.
 */
export function mcpCommand(bridge: string = DEFAULT_BRIDGE_COMMAND): { command: string; args: string[] } {
  const m = /^(.*\S)\s+hook\s+claude-code\s*$/.exec(bridge.trim());
  if (m && !/['"`$|&;<>\\(){}*?]/.test(m[1]!)) {
    const [command, ...rest] = m[1]!.split(/\s+/);
    return { command: command!, args: [...rest, 'mcp'] };
  }
  return { command: 'switchboard', args: ['mcp'] };
}

export function mcpServerEntry(
  scope: SettingsScope,
  options: { url: string; bridge?: string; keyFile?: string },
): Json {
  const env: Record<string, string> = { SWITCHBOARD_URL: options.url };
  if (scope === 'project') env[DEFAULT_KEY_ENV] = `\${${DEFAULT_KEY_ENV}}`;
  // The path of this machine's agent key file, never the key: not in `.mcp.json`, which is shared.
  else if (options.keyFile) env.SWITCHBOARD_KEY_FILE = options.keyFile;
  return { ...mcpCommand(options.bridge), env };
}

export type McpMergeOutcome =
  | { kind: 'ok'; config: Json; changed: boolean; warnings: string[] }
  | { kind: 'invalid'; problem: string };

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Puts our entry under `at` without touching other servers or keys. An existing stdio `switchboard`
 * entry is ours: its command, args and our two variables are set, anything else the user added to it
 * (more env, a `type`) stays. An HTTP or SSE `switchboard` entry (someone pointed Claude Code at
 * `/mcp` directly) is left alone with a warning.
 */
export function mergeMcpServer(file: unknown, at: string[], entry: Json): McpMergeOutcome {
  const base = file === undefined || file === null ? {} : file;
  if (!isRecord(base)) return { kind: 'invalid', problem: 'the file is not a JSON object' };
  const next = structuredClone(base);
  let node: Json = next;
  for (const [i, key] of at.entries()) {
    const child = node[key];
    if (child === undefined) node[key] = {};
    else if (!isRecord(child)) {
      return { kind: 'invalid', problem: `"${at.slice(0, i + 1).join('.')}" is not an object` };
    }
    node = node[key] as Json;
  }
  const current = node[MCP_SERVER_NAME];
  if (current !== undefined && !isRecord(current)) {
    return { kind: 'invalid', problem: `"${[...at, MCP_SERVER_NAME].join('.')}" is not an object` };
  }
  if (current && current.type !== undefined && current.type !== 'stdio') {
    return {
      kind: 'ok',
      config: base as Json,
      changed: false,
      warnings: [
        `${[...at, MCP_SERVER_NAME].join('.')} is a ${String(current.type)} server; left as it is (remove it to get the stdio entry)`,
      ],
    };
  }
  const env = isRecord(current?.env) ? current.env : {};
  node[MCP_SERVER_NAME] = { ...current, ...entry, env: { ...env, ...(entry.env as Json) } };
  return { kind: 'ok', config: next, changed: !isDeepStrictEqual(next, base), warnings: [] };
}
