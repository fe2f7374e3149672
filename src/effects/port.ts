import { planDigest, sha256Hex } from '../envelope/index.js';
import { port } from '../kernel/port.js';
import type { Db } from '../store/port.js';
import type { EffectRow } from './sql.js';

/**
 * Side effects with receipts (issue 20 point 1, seed 001 §七 `effect_attempt` / `effect_receipt`).
 * A module that acts on the world — a task `http` action, a reach write tool, a delivery (an A2A push
 * is one) — says so before it acts (`prepared`, in its own transaction where it has one) and records
 * what came back (`receipted`). Both write an event, so the log links intent → decision → approval →
 * effect → receipt; `trace` reads that chain back. The module is optional to its callers.
 */

export type EffectKind = 'http' | 'reach' | 'delivery' | 'a2a';

/**
 * `prepared`: frozen, about to go out (or out, no answer yet). `done` / `failed`: the receipt says so.
 * `unknown`: sent, no answer (a timeout after the request left) — the reconciler's work.
 * `resendable`: the reconciler learned it did not happen, and it goes out again.
 * `unsettled`: nobody could tell; a person decides (the takeover queue lists it).
 */
export type EffectStatus = 'prepared' | 'done' | 'failed' | 'unknown' | 'resendable' | 'unsettled';
export const EFFECT_STATUSES: readonly EffectStatus[] = [
  'prepared',
  'done',
  'failed',
  'unknown',
  'resendable',
  'unsettled',
];

export interface PrepareEffect {
  kind: EffectKind;
  /** What the effect acts for, by id: a task (`tsk_`), a touch request id, a delivery (`dlv_`). */
  ref: string;
  /** Where it goes, by name (a channel, a tool, a destination; never a URL with secrets). */
  target: string;
  /** The frozen plan (`planDigest`, or the gate's `plan_digest`). */
  plan_digest: string;
  /** The gate's capability, when a decision issued one. */
  capability_id?: string | null;
  policy_revision?: string | null;
  /** The approval that let it through, when one did: its events are the approval evidence. */
  approval_id?: string | null;
  task_id?: string | null;
  correlation_id?: string | null;
  /** The event the effect follows from (the intent, the notification, the cause). */
  causation_id?: string | null;
}

export interface Prepared {
  id: string;
  idempotency_key: string;
  /** False when an effect with this key was already prepared (a replay): nothing new was written. */
  created: boolean;
}

export interface EffectReceipt {
  status: Exclude<EffectStatus, 'prepared'>;
  /** The provider's id for what it did (Slack `ts`, Telegram `message_id`, an HTTP status line). */
  provider_id?: string | null;
  /** The answer's body: only its digest is kept. */
  answer?: string | null;
  /** A short, secret-free word on why (an HTTP status, an error code, the reconciler's finding). */
  detail?: string | null;
  /** Set by the reconciler: this receipt is what the system of record said afterwards. */
  reconciled?: boolean;
}

/** An effect as the API shows it: its row, with the kind and status typed and the times in ISO 8601. */
export type EffectView = Omit<EffectRow, 'kind' | 'status' | 'created_at' | 'updated_at'> & {
  kind: EffectKind;
  status: EffectStatus;
  created_at: string;
  updated_at: string;
};

export type TraceStage =
  | 'intent'
  | 'decision'
  | 'approval'
  | 'capability'
  | 'effect'
  | 'receipt'
  | 'task'
  | 'other';

export interface TraceStep {
  seq: number;
  event_id: string;
  type: string;
  stage: TraceStage;
  occurred_at: string;
  policy_revision: string | null;
  /** The few ids and outcomes that tie the step to its neighbours (never payloads). */
  facts: Record<string, unknown>;
}

export interface Trace {
  /** What was asked for, as given. */
  id: string;
  effects: EffectView[];
  steps: TraceStep[];
}

export interface EffectsPort {
  /** Records the effect and `agent.effect.prepared` in `db` (the caller's transaction). Idempotent on the key. */
  prepared(e: PrepareEffect, db?: Db): Promise<Prepared>;
  /** Records the receipt and `agent.effect.receipted`; undefined when no effect has the key. */
  receipted(idempotencyKey: string, r: EffectReceipt, db?: Db): Promise<EffectView | undefined>;
  /**
   * The receipts of a batch (the delivery engine's settle of many attempts) in `db`, in two statements
   * for any number: one read of the rows, one UPDATE; one `agent.effect.receipted` each, as `receipted`
   * writes it. Returns how many keys had an effect. Optional: a port without it is called per receipt.
   */
  receiptedMany?(items: readonly { key: string; receipt: EffectReceipt }[], db?: Db): Promise<number>;
  get(idOrKey: string): Promise<EffectView | undefined>;
  list(filter?: { status?: EffectStatus; task_id?: string; limit?: number }): Promise<EffectView[]>;
  /**
   * Effects that wait for a person (`unsettled`): an unknown outcome no reconciler could settle, or of a
   * kind nothing reconciles (a task `http` action, a reach tool). The takeover queue lists them.
   */
  unsettled(limit?: number): Promise<EffectView[]>;
  /** intent → decision → approval → effect → receipt for an event, task, effect, delivery or touch id. */
  trace(id: string): Promise<Trace | undefined>;
}

export const effectsPort = port<EffectsPort>('effects');

/**
 * The idempotency key of an effect: derived from its plan digest and capability id, so a retry of the
 * same effect carries the same key and any change to what would run (or to who allowed it) makes a new
 * one. Pure, so a caller can put it on the wire (`Idempotency-Key`) without asking the module.
 */
export function effectKey(planDigest: string, capabilityId: string | null | undefined): string {
  return `idk_${sha256Hex(`${planDigest}\n${capabilityId ?? ''}`).slice(0, 40)}`;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The plan digest of a delivery: one event to one destination, `planDigest({ tool: 'delivery',
 * resource: destination, input: { event_id } })`. Computed twice per delivery (prepared at enqueue,
 * receipted at settle), so its RFC 8785 form is written out here (keys in code-unit order; a string's
 * canonical form is JSON.stringify's) instead of walking the object: batch.test.ts pins it to planDigest.
 */
export function deliveryPlanDigest(eventId: string, destination: string): string {
  // A lone surrogate has no RFC 8785 form: planDigest refuses it, with its error.
  if (LONE_SURROGATE.test(eventId) || LONE_SURROGATE.test(destination))
    return planDigest({ tool: 'delivery', resource: destination, input: { event_id: eventId } });
  const canonical = `{"action":null,"input":{"event_id":${JSON.stringify(eventId)}},"resource":${JSON.stringify(destination)},"tool":"delivery"}`;
  return `sha256:${sha256Hex(canonical)}`;
}
