import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtimes/runtime.js';

/**
 * What to do when the gate cannot answer (the gateway is down, hangs, or runs without a gate): the
 * same rule for the bridge and the route. Imports nothing but adapter types, so the bridge stays small.
 */

/**
 * Tools that only read local files or list them, by the runtime's own name. They may run when no
 * decision can be had; everything else is refused. WebFetch and WebSearch are *not* here: a URL or a
 * query can carry what was just read off the machine, so they wait for the gate like any egress.
 */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  // Claude Code (also Cursor's beforeReadFile, which the adapter names `Read`)
  'Read',
  'Glob',
  'Grep',
  'LS',
  'NotebookRead',
  // Gemini CLI
  'read_file',
  'read_many_files',
  'glob',
  'list_directory',
  'search_file_content',
  // Hermes
  'search_files',
  // OpenClaw
  'read',
]);

export function isReadOnlyTool(tool: string | undefined): boolean {
  return tool !== undefined && READ_ONLY_TOOLS.has(tool);
}

export type FailMode = 'closed' | 'open';

/** Closed refuses a blocking event on a tool not known read-only; open lets everything through. */
export function failsClosed(n: Normalized, mode: FailMode): boolean {
  return mode === 'closed' && n.blocking && n.intent !== undefined && !isReadOnlyTool(n.intent.tool);
}

export const GATE_UNAVAILABLE = 'GATE_UNAVAILABLE';

export function unavailableDecision(reason: string): Decision {
  return { decision: 'deny', reason_code: GATE_UNAVAILABLE, reason };
}

/** The native reply when no decision could be had: the runtime's deny, or its neutral answer. */
export function replyWithoutGate(
  adapter: RuntimeAdapter,
  n: Normalized,
  mode: FailMode,
  reason: string,
): NativeReply {
  if (n.problem) return adapter.errorReply(n.problem);
  return failsClosed(n, mode) ? adapter.reply(n, unavailableDecision(reason)) : adapter.neutralReply();
}
