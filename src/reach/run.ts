import type { Logger } from 'pino';
import type { ApprovalService } from '../approvals/port.js';
import type { DeliveryPort } from '../delivery/port.js';
import { type EffectReceipt, type EffectsPort, effectKey } from '../effects/port.js';
import { type Envelope, type EnvelopeInput, jsonDigest } from '../envelope/index.js';
import type { GateDecision, GateService } from '../gate/port.js';
import type { StoredPayload, Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import type { TaskService } from '../tasks/port.js';
import { prefix } from '../text/index.js';
import { attempt, type Outcome } from './attempt.js';
import { callbackMessage } from './callback.js';
import type { ReachConfig } from './config.js';
import { processResult } from './context.js';
import { type Cause, completedEvent, denial, intentOf, sealedTouch } from './events.js';
import { archiveShortTerm } from './memory.js';
import type { TouchCaller } from './port.js';
import type { TouchError, TouchResponse } from './protocol.js';
import { failed } from './protocol.js';
import { redactText } from './redact.js';
import type { Tool } from './registry.js';
import * as q from './sql.js';

/**
 * The run path of a touch, once the gate let it through (touch.ts) or a person approved it
 * (approval.ts): the admin re-check, the effect's record, the backend under its deadline, then the
 * outcome processed (PII out, shape, tokens), sealed, stored and logged in one commit, with the push
 * callback enqueued in that same commit.
 */

export interface TouchOptions {
  /** The stream channel's sink: partial output lines, PII redacted. */
  onPartial?: (text: string) => void;
  /** MCP calls: wait for the result whatever the tool's channel, partials as progress. */
  wait?: boolean;
}

export interface ReachDeps {
  db: Db;
  vault: Vault;
  logger: Logger;
  now: () => number;
  tenant: string;
  config: ReachConfig;
  vaultTtlMs: number;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  gate(): GateService | undefined;
  approvals(): ApprovalService | undefined;
  tasks(): TaskService | undefined;
  /** Where an async touch's push callback is enqueued (the delivery engine), when it runs. */
  delivery(): DeliveryPort | undefined;
  /** `server.public_url`: the base of the GET link a pushed result carries. */
  publicUrl: string | undefined;
  /** The effect ledger (src/effects), when it runs: a write or admin tool's run is an effect with a receipt. */
  effects?(): EffectsPort | undefined;
}

/** A finished touch's row columns: what `finishTouch` sets, or what a one-commit read inserts. */
export interface Settled {
  status: 'done' | 'failed';
  response_ref: string;
  error_code: string | null;
  summary: string | null;
  cost_ms: number;
  updated_at: number;
}

/** What a run needs of the engine: its dependencies and the signal that stops every running tool. */
export interface RunScope {
  d: ReachDeps;
  stopping: AbortSignal;
}

/** One touch on its way to the backend: the tool, the (possibly rewritten) params, who, and why. */
export interface Run {
  tool: Tool;
  params: Record<string, unknown>;
  c: TouchCaller;
  owner: string;
  requestId: string;
  cause: Cause;
  /**
   * A one-commit read's intent, not written yet. `payload` is the intent as the vault holds it
   * (events.ts `sealedIntent`); `finish` seals it with the response as one record (`sealedTouch`)
   * and `write`s, in the outcome's commit, the touch row (written once, already `settled`),
   * `agent.touch.requested` pointing at that record, and the gate's request and decision
   * (GateContext.later). The outcome is caused by the event `write` returns instead of `cause`.
   */
  intent?: {
    payload: Record<string, unknown>;
    write(tx: Db, settled: Settled, sealed: StoredPayload): Promise<Envelope>;
  };
  timeoutMs: number;
  retry: number;
  o: TouchOptions;
  cost: () => number;
}

/** What let a run through: the decision's (or the approval's) plan, capability, revision and approval. */
export interface Basis {
  plan_digest: string;
  capability_id: string | null;
  policy_revision: string | null;
  approval_id: string | null;
  /** The intent's chain when the cause at hand is not its event (the retry after an approval). */
  correlation_id?: string | null;
}

export const basisOf = (d: GateDecision): Basis => ({
  plan_digest: d.plan_digest,
  capability_id: d.capability?.id ?? null,
  policy_revision: d.policy_revision,
  approval_id: d.approval_id ?? null,
});

/** A tool's outcome as a receipt: a timeout may have acted, so nobody but a person can settle it. */
function receiptOf(o: Outcome): EffectReceipt {
  if ('data' in o) return { status: 'done', answer: JSON.stringify(o.data ?? null) };
  if (o.error.code === 'TIMEOUT') return { status: 'unsettled', detail: o.error.code };
  return { status: 'failed', detail: o.error.code };
}

/** Runs the backend under the deadline; the result (or failure) is processed, logged and answered. */
export async function execute(
  s: RunScope,
  r: Run,
  approvedDigest: string | undefined,
  basis?: Basis,
): Promise<TouchResponse> {
  const { tool, params, c, o } = r;
  if (tool.permission === 'admin') {
    // Seed §3.3: an admin tool is checked again where it executes, against the policy serving now.
    const again = await recheck(s.d, tool, params, c, approvedDigest);
    if (again) return finish(s.d, r, { error: again }, r.cost());
  }
  const partial = o.onPartial ? (text: string) => o.onPartial!(redactText(text, tool.redact)) : undefined;
  const effect = await prepareEffect(s.d, r, basis);
  let tries = 0;
  let outcome: Outcome;
  for (;;) {
    outcome = await attempt(tool, params, {
      caller: c,
      owner: r.owner,
      timeoutMs: r.timeoutMs,
      maxBytes: s.d.config.max_result_bytes,
      stopping: s.stopping,
      onPartial: partial,
      logger: s.d.logger,
    });
    const retryable =
      'error' in outcome && outcome.error.code === 'TOOL_FAILED' && tool.permission === 'read';
    if (!retryable || tries >= r.retry) break;
    tries++;
  }
  if (effect) await effect(receiptOf(outcome));
  return finish(s.d, r, outcome, r.cost());
}

/**
 * A write or admin tool (not memory, which stays inside the gateway) is an effect: prepared before
 * the backend runs, with the key from the plan digest and the capability; the returned function
 * records its receipt.
 */
async function prepareEffect(
  d: ReachDeps,
  r: Run,
  basis: Basis | undefined,
): Promise<((r: EffectReceipt) => Promise<void>) | undefined> {
  const effects = d.effects?.();
  const { tool, params, cause } = r;
  if (!effects || tool.permission === 'read' || tool.kind === 'memory') return undefined;
  const plan = basis?.plan_digest || jsonDigest({ tool: tool.name, params });
  const capability = basis?.capability_id ?? null;
  const env = 'event_id' in cause ? cause : undefined;
  await effects.prepared({
    kind: 'reach',
    ref: r.requestId,
    target: tool.name,
    plan_digest: plan,
    capability_id: capability,
    policy_revision: basis?.policy_revision ?? null,
    approval_id: basis?.approval_id ?? null,
    task_id: r.c.task_id,
    correlation_id: env?.correlation_id ?? basis?.correlation_id ?? null,
    causation_id: env?.event_id ?? null,
  });
  const key = effectKey(plan, capability);
  return async (receipt) => {
    await effects.receipted(key, receipt);
  };
}

async function recheck(
  d: ReachDeps,
  tool: Tool,
  params: Record<string, unknown>,
  c: TouchCaller,
  approvedDigest: string | undefined,
): Promise<TouchError | undefined> {
  const gate = d.gate();
  const intent = intentOf(tool, params, c);
  if (!gate)
    return {
      code: 'DENIED',
      message: 'the policy gate is not running',
      details: { reason_code: 'GATE_UNAVAILABLE' },
    };
  const decision =
    approvedDigest !== undefined && gate.evaluateApproved
      ? await gate.evaluateApproved(intent, { principal: c.principal }, approvedDigest)
      : await gate.evaluate(intent, { principal: c.principal });
  if (decision.decision === 'allow') return undefined;
  if (approvedDigest !== undefined && decision.decision === 'require_approval') return undefined;
  return {
    ...denial(decision, tool),
    message: `${tool.name} was re-checked where it runs and refused (${decision.reason_code})`,
  };
}

/** Processes the outcome, seals the response in the vault, updates the row, logs — one commit. */
export async function finish(
  d: ReachDeps,
  r: Pick<Run, 'requestId' | 'tool' | 'c' | 'owner' | 'cause' | 'intent'>,
  outcome: { data: unknown } | { error: TouchError },
  costMs: number,
): Promise<TouchResponse> {
  const { requestId, tool, c, owner, intent } = r;
  let response: TouchResponse;
  let summary: string;
  if ('data' in outcome) {
    const p = processResult(outcome.data, { ...tool.context, redact: tool.redact });
    response = {
      request_id: requestId,
      ok: true,
      data: p.data,
      text: p.text,
      context: p.report,
      cost_ms: costMs,
    };
    const items = p.report.total_items !== undefined ? ` ${p.report.total_items} items` : '';
    summary = `${tool.name} → ok${items}: ${prefix(p.text.replace(/\s+/g, ' '), 240)}`;
  } else {
    response = failed(requestId, outcome.error, costMs);
    summary = `${tool.name} → ${outcome.error.code}: ${prefix(outcome.error.message, 200)}`;
  }
  const status = response.ok ? 'done' : 'failed';
  await d.db.tx(async (tx) => {
    const sealed = await d.vault.put(
      JSON.stringify(intent ? sealedTouch(intent.payload, response) : response),
      {
        tenantId: d.tenant,
        ttlMs: d.vaultTtlMs,
        db: tx,
      },
    );
    const settled: Settled = {
      status,
      response_ref: sealed.ref,
      error_code: response.error?.code ?? null,
      summary: tool.kind === 'memory' ? null : redactText(summary, tool.redact),
      cost_ms: Math.round(costMs),
      updated_at: d.now(),
    };
    let cause = r.cause;
    let row: { callback: string | null } | undefined;
    if (intent) cause = await intent.write(tx, settled, sealed);
    else
      [row] = await tx.query<{ callback: string | null }>(
        q.finishTouch({
          tenant: d.tenant,
          caller: c.principal.name,
          requestId,
          status: settled.status,
          responseRef: settled.response_ref,
          errorCode: settled.error_code,
          summary: settled.summary,
          costMs: settled.cost_ms,
          now: settled.updated_at,
        }),
      );
    const completed = await d.emit(
      completedEvent(cause, requestId, tool.name, tool.kind, c, response, sealed),
      tx,
    );
    if (row?.callback) await push(d, tx, row.callback, response, tool.name, c, completed.event_id);
    if (c.task_id && tool.kind !== 'memory')
      await archiveShortTerm(tx, d, owner, c.task_id, d.config.memory.short_term);
  });
  return response;
}

/** The push callback, in the finishing commit: the result and its delivery are stored together. */
async function push(
  d: ReachDeps,
  tx: Db,
  destination: string,
  response: TouchResponse,
  tool: string,
  c: TouchCaller,
  eventId: string,
): Promise<void> {
  const delivery = d.delivery();
  if (!delivery) {
    // The module was configured away since the touch was accepted: the result stays readable by GET.
    d.logger.warn({ request_id: response.request_id }, 'reach: no delivery module for a callback');
    return;
  }
  const message = callbackMessage(response, tool, c.principal.name, c.task_id, eventId, d.publicUrl);
  await delivery.enqueue(tx, { eventId, destination, message });
}

/** One event for a touch refused before the gate: nothing ran, nothing was sealed. */
export async function refused(
  d: ReachDeps,
  requestId: string,
  tool: string,
  c: TouchCaller,
  e: TouchError,
  costMs: number,
): Promise<void> {
  const response = failed(requestId, e, costMs);
  await d.emit(
    completedEvent(
      { task_id: c.task_id, session_id: c.session_id ?? null },
      requestId,
      tool,
      null,
      c,
      response,
    ),
  );
}
