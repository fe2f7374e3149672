import { READ_ONLY_TOOLS } from '../../gate/read-only.js';
import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';

/**
 * What to do when the gate cannot answer (the gateway is down, hangs, or runs without a gate): the
 * same rule for the bridge and the route. Imports nothing but adapter types and the gate's import-free
 * tool list, so the bridge stays small.
 */

/**
 * The gate's list of read-only tools, so the bridge fails closed on exactly the tools the gate calls
 * high risk (WebFetch and WebSearch among them: see src/gate/read-only.ts for why).
 */
const READ_ONLY: ReadonlySet<string> = new Set(READ_ONLY_TOOLS);

export function isReadOnlyTool(tool: string | undefined): boolean {
  return tool !== undefined && READ_ONLY.has(tool);
}

export type FailMode = 'closed' | 'open';

/** Closed refuses a blocking event on a tool not known read-only; open lets everything through. */
export function failsClosed(n: Normalized, mode: FailMode): boolean {
  return mode === 'closed' && n.blocking && n.intent !== undefined && !isReadOnlyTool(n.intent.tool);
}

export const GATE_UNAVAILABLE = 'GATE_UNAVAILABLE';

/**
 * Fail closed, but to the person at the desk: a runtime that can ask its user natively (Claude Code
 * `ask`) shows its own permission dialog, so a gateway that is down stops nothing you would have
 * allowed by hand; a runtime that cannot ask gets its deny (`verdictFor`). Never an allow.
 */
export function unavailableDecision(reason: string): Decision {
  return { decision: 'require_approval', reason_code: GATE_UNAVAILABLE, reason };
}

/** What a reason for an unreachable gateway ends with: how to bring it back. */
export const START_GATEWAY_HINT =
  'start it with `switchboard serve` in its folder, or keep it running with `switchboard service install`';

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
