import type { Envelope, Risk } from '../envelope/envelope.js';
import type { Plan } from '../envelope/plan.js';
import type { CapabilityGrant, DecisionKind, GateDecision, MatchedRule } from './port.js';

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
