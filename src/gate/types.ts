import type { Envelope, Risk } from '../envelope/envelope.js';
import type { Plan } from '../envelope/plan.js';
import type { CapabilityGrant, DecisionKind, GateDecision, MatchedRule } from './port.js';
import type { HistoryWindow } from './history.js';
import type { ToolArgs, ToolKind } from './kinds.js';

export type { CapabilityGrant, DecisionKind, MatchedRule, Plan, Risk };
export { DECISIONS } from './port.js';

/** The decision contract, declared once in the gate's port (`GateDecision`); the engine's name for it. */
export type Decision = GateDecision;

/**
 * What the gate is asked about: one tool intent. `event_type` is the envelope type the intent travels
 * as (default `agent.tool.requested`); `runtime` is the adapter that saw it (`claude-code`, …).
 * Field names follow `GateIntent` in src/server/ports.ts, so the port passes an intent straight in.
 */
export interface Intent {
  event_type?: string;
  tool: string;
  input: Record<string, unknown>;
  action?: string | null;
  resource?: string | null;
  runtime?: string | null;
  /** The canonical kind (`shell`, `file.read`, …); `other` when absent. */
  kind?: ToolKind;
  /** The kind's canonical args as the adapter read them; the gate completes them (args.ts). */
  args?: ToolArgs;
  /** The caller says the intent brings outside content in (GateIntent.untrusted). */
  untrusted?: boolean;
}

/** One earlier intent of the session (or task), as CEL's `history` lists it, newest last. */
export interface HistoryEntry {
  kind: string;
  tool: string;
  decision: DecisionKind;
  /** ISO 8601. */
  at: string;
  /** The intent brought outside content in (it read the web, a webhook payload, an A2A message, an untrusted reach tool). */
  untrusted: boolean;
  /** Files it named (file kinds) and the host it reached (web.fetch), so a rule can ask "after reading .env". */
  paths: string[];
  host: string;
}

export interface TaskFacts {
  id: string | null;
  owner: string | null;
  /** Tool calls so far in this task, this one included (the hook route counts a step before it asks). */
  steps: number;
  wall_time_seconds: number;
}

/** Facts the caller knows about the asking task; everything is optional so a bare intent still works. */
export interface GateContext {
  now?: Date;
  tenant_id?: string;
  agent_id?: string | null;
  task?: Partial<TaskFacts>;
  envelope?: Envelope | Record<string, unknown>;
  budgets?: Record<string, number>;
  /** The agent or tenant is frozen to read-only: every high-risk intent is denied. */
  frozen?: boolean;
  /** When present, an `allow` or `modify` decision carries a capability signed with these keys. */
  signer?: CapabilitySigner;
  /** The session's (or task's) earlier intents, oldest first; empty when none or unknown. */
  history?: readonly HistoryEntry[];
  /**
   * The window `history` comes from, when there is one: its entries are then `history`, and the
   * policy's `history.exists(h, …)` predicates are answered from its index instead of a walk.
   */
  window?: HistoryWindow;
  /**
   * Facts about the session: `untrusted` once it took outside content in; counts over `history` by
   * kind, host and file name (history.ts, `HistoryWindow`).
   */
  session?: {
    id?: string | null;
    untrusted: boolean;
    kinds?: ReadonlyMap<string, bigint>;
    hosts?: ReadonlyMap<string, bigint>;
    files?: ReadonlyMap<string, bigint>;
  };
}

export interface CapabilityKey {
  /** Names the key in the token header, so keys can rotate. */
  id: string;
  secret: Uint8Array;
}

export interface CapabilitySigner {
  /** The first key signs; verification accepts any of them. */
  keys: readonly CapabilityKey[];
  ttl_seconds?: number;
}
