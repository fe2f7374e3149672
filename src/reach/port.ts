import type { Principal } from '../kernel/module.js';
import { port } from '../kernel/port.js';
import type { ParsedTouchRequest, ToolListing, TouchRequest, TouchResponse } from './protocol.js';

export type { ParsedTouchRequest, ToolListing, TouchRequest, TouchResponse };

/** Who touches: the key (never the body), the task it acts for, the session if the runtime said. */
export interface TouchCaller {
  principal: Principal;
  task_id: string | null;
  session_id?: string;
}

/**
 * A touch as the console's Tools page lists it: who, which tool, how it ended and how long it took;
 * never its params, its result or the result's one-line summary (those stay with the caller).
 */
export interface TouchSummary {
  request_id: string;
  caller: string;
  tool: string;
  channel: string;
  /** As stored: `awaiting_approval`, `running`, `done`, `failed`. */
  status: string;
  task_id: string | null;
  error_code: string | null;
  cost_ms: number | null;
  created_at: string;
}

export interface ReachService {
  /** The registry as GET /v1/tools lists it, memory tools included, sorted by name. */
  list(): ToolListing[];
  /**
   * One touch. `wait`: answer when done whatever the tool's channel (MCP calls); `onPartial`: the
   * stream channel's partial lines, PII redacted.
   */
  touch(
    req: TouchRequest,
    caller: TouchCaller,
    opts?: { wait?: boolean; onPartial?: (text: string) => void },
  ): Promise<TouchResponse>;
  /** GET /v1/touch/{id}: the caller's own touch only. Reads, never writes. */
  status(caller: string, requestId: string): Promise<TouchResponse | undefined>;
  /** Every caller's newest touches, newest first, optionally of one tool (the console). Reads only. */
  recent?(opts: { limit: number; tool?: string }): Promise<TouchSummary[]>;
}

/** The reach registry and touch engine (src/reach/module.ts provides it; the MCP server lists its tools). */
export const reachPort = port<ReachService>('reach');
