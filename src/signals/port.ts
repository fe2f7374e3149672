import type { Envelope } from '../envelope/index.js';
import type { GateIntent } from '../gate/port.js';
import type { Principal } from '../kernel/module.js';
import { port } from '../kernel/port.js';
import type { AwayView } from './away.js';

export type { AwayView };

/**
 * A permission prompt no rule decided (Claude Code / Codex `PermissionRequest`), offered to the phone.
 * Set by the signals module, which knows whether the owner is away and what context a person needs.
 */
export interface PhoneApprovals {
  /**
   * When the owner is away (and prompts may go to the phone), creates an approval for the prompt,
   * which notify announces with approve/deny buttons, and says how long to hold the hook for it (never
   * more than `maxHoldMs`). Undefined: the prompt stays at the desk, answered with no decision.
   */
  escalate(req: PhoneEscalation): Promise<{ approval_id: string; hold_ms: number } | undefined>;
}

export interface PhoneEscalation {
  intent: GateIntent;
  principal: Principal;
  /** The `agent.permission.requested` envelope: the approval is caused by it. */
  cause: Envelope;
  /** The hook's own body (cwd, session, transcript path): context for the person. */
  raw: Record<string, unknown>;
  /** What the runtime's timeout and the bridge's deadline leave for holding the hook. */
  maxHoldMs: number;
}

/** Permission prompts taken to the phone while away (src/signals/module.ts provides it). */
export const phonePort = port<PhoneApprovals>('signals.phone');

/** Away mode as people read and switch it (`GET/PUT /v1/away`; the console's sessions page). */
export interface AwaySwitch {
  /** `owner` omitted: the tenant's own switch, which every owner without one of their own follows. */
  read(owner?: string): Promise<AwayView>;
  /** Switches and records `agent.away.changed` (actor: `by`) in one transaction. */
  set(req: { owner?: string; away: boolean; by: string }): Promise<AwayView>;
}

/** Away mode (src/signals/module.ts provides it). */
export const awayPort = port<AwaySwitch>('signals.away');

/** A session the supervisor found stalled mid-turn and activity has not cleared since. */
export interface StalledSession {
  runtime: string;
  session_id: string;
  /** When the stall notice went out (epoch ms). */
  since: number;
}

/** The supervisor's view of interactive sessions, so every reader agrees on which one is stalled. */
export interface SessionWatch {
  /** Sessions stalled now (`signals.stall_after_seconds` of quiet mid-turn), the newest stall first. */
  stalled(limit: number): Promise<StalledSession[]>;
}

/** Stalled sessions (src/signals/module.ts provides it; the console's sessions page reads it). */
export const sessionWatchPort = port<SessionWatch>('signals.sessions');
