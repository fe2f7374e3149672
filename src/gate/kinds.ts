/**
 * The canonical tool vocabulary one policy is written in, whatever runtime asked (CONTRACT.md, wave 2;
 * modelled on the Agent Client Protocol's `ToolKind`, reference/wave2.md §5). Each runtime adapter maps
 * its own tool names and input shapes onto a kind and its `args` (src/runtimes/kinds.ts); the gate
 * completes the args it can derive (src/gate/args.ts) and hands both to CEL. This file imports nothing:
 * the adapters, and so the hook bridge's bundle, use it.
 */
export const TOOL_KINDS = [
  'shell',
  'file.read',
  'file.write',
  'file.edit',
  'file.delete',
  'web.fetch',
  'web.search',
  'mcp',
  'agent.delegate',
  'notify',
  'reach.http',
  'reach.sql',
  'reach.command',
  'other',
] as const;

export type ToolKind = (typeof TOOL_KINDS)[number];

export function isToolKind(value: unknown): value is ToolKind {
  return typeof value === 'string' && (TOOL_KINDS as readonly string[]).includes(value);
}

/**
 * The canonical fields of a kind, as an adapter reads them from the tool input. Which are present
 * depends on the kind: `command`, `cwd` (shell); `path`, `paths` (file kinds; a patch names every file
 * it touches in `paths`); `url`, `urls` (web.fetch); `query` (web.search); `server`, `tool` (mcp).
 * The gate adds `argv` and `commands` (shell) and `host` (web.fetch) from these.
 */
export interface ToolArgs {
  command?: string;
  cwd?: string;
  path?: string;
  paths?: string[];
  url?: string;
  urls?: string[];
  query?: string;
  server?: string;
  tool?: string;
  [key: string]: unknown;
}

/** A tool call as the policy sees it: the kind and its canonical args. */
export interface Classified {
  kind: ToolKind;
  args: ToolArgs;
}
