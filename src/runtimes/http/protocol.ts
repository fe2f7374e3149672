/**
 * How the bridge and the route talk, shared by both without pulling in either side's imports.
 *
 * The route answers in one of two forms. A runtime that calls it itself (Claude Code HTTP hooks, the
 * OpenClaw plugin) gets the adapter's `httpBody`. The bridge sends `X-Switchboard-Bridge: 1` and gets
 * the whole native reply `{ exitCode, stdout, stderr }`, because a command hook answers with all three.
 */
export const BRIDGE_HEADER = 'x-switchboard-bridge';

/** How long the bridge will wait, so the gateway holds an approval for less than that. */
export const DEADLINE_HEADER = 'x-switchboard-deadline-ms';

export const HOOK_ROUTE = (runtime: string) => `/v1/runtimes/${encodeURIComponent(runtime)}/hooks`;

export interface BridgeReply {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function isBridgeReply(value: unknown): value is BridgeReply {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    Number.isInteger(v.exitCode) &&
    (v.exitCode as number) >= 0 &&
    (v.exitCode as number) <= 255 &&
    typeof v.stdout === 'string' &&
    typeof v.stderr === 'string'
  );
}
