import type { Logger } from 'pino';
import type { ApprovalService } from '../approvals/port.js';
import type { DeliveryPort } from '../delivery/port.js';
import { type EffectReceipt, type EffectsPort, effectKey } from '../effects/port.js';
import { type Envelope, type EnvelopeInput, jsonDigest, newId } from '../envelope/index.js';
import { type GateDecision, type GateIntent, type GateService, gateUnavailable } from '../gate/port.js';
import type { Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import type { TaskService } from '../tasks/port.js';
import type { Channel, ReachConfig } from './config.js';
import { processResult } from './context.js';
import { attempt, type Outcome } from './attempt.js';
import { callbackMessage, callbackProblem } from './callback.js';
import { approvalRequired, type Cause, completedEvent, denial, intentOf, requestedEvent } from './events.js';
import { Concurrency } from './guard.js';
import type { ParsedTouchRequest, TouchError, TouchResponse } from './protocol.js';
import { failed } from './protocol.js';
import { describeTouch } from './status.js';
import { redactText } from './redact.js';
import { asyncOnly, type Tool } from './registry.js';
import { explain, problemsLine } from './schema.js';
import * as q from './sql.js';
import { nearestNames } from './suggest.js';
import { archiveShortTerm } from './memory.js';
import type { TouchCaller } from './port.js';
import { prefix } from '../text/index.js';

/**
 * The touch engine (seed §3): lookup → parameters against the compiled schema → channel rules →
 * per-task cap → per-tool concurrency → the intent through the gate (deny, approval, modify) → the
 * backend under its deadline → JSON check → context processing (PII out, shape, tokens) → the log.
 * Every step that refuses answers with a code from the closed catalogue (protocol.ts).
 *
 * Log shape: a touch that reaches the gate is `agent.touch.requested` (params sealed in the vault,
 * committed in the gate's own decision transaction, so intent, decision and row are one commit) and
 * then `agent.touch.completed` (the processed, redacted response sealed in the vault; outcome, cost,
 * tokens before and after on the event). One refused before the gate (unknown tool, bad params, cap,
 * concurrency) is a single `agent.touch.completed` with its code.
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

/** What let a run through: the decision's (or the approval's) plan, capability, revision and approval. */
interface Basis {
  plan_digest: string;
  capability_id: string | null;
  policy_revision: string | null;
  approval_id: string | null;
  /** The intent's chain when the cause at hand is not its event (the retry after an approval). */
  correlation_id?: string | null;
}

const basisOf = (d: GateDecision): Basis => ({
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

/** How long an async touch waits in the background for a person (approvals expire well before). */
const APPROVAL_WAIT_MS = 24 * 3_600_000;

class Duplicate extends Error {}

export class Reach {
  readonly concurrency = new Concurrency();
  private readonly background = new Set<Promise<unknown>>();
  private readonly stopping = new AbortController();
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly d: ReachDeps,
    readonly tools: ReadonlyMap<string, Tool>,
  ) {}

  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  /** The memory and data scope (docs/reach.md, "Memory"): a task-bound key acts for its task's owner. */
  async ownerOf(c: TouchCaller): Promise<string> {
    const p = c.principal;
    if (!p.task_id) return p.name;
    const known = this.owners.get(p.task_id);
    if (known) return known;
    const owner = (await this.d.tasks()?.get(p.task_id))?.owner ?? p.name;
    if (this.owners.size > 10_000) this.owners.clear();
    this.owners.set(p.task_id, owner);
    return owner;
  }

  async touch(req: ParsedTouchRequest, c: TouchCaller, o: TouchOptions = {}): Promise<TouchResponse> {
    const started = performance.now();
    const cost = () => Math.round((performance.now() - started) * 100) / 100;
    const requestId = req.request_id ?? newId('touch', this.d.now());
    const refuse = async (tool: string, e: TouchError): Promise<TouchResponse> => {
      await this.refused(requestId, tool, c, e, cost());
      return failed(requestId, e, cost());
    };

    const tool = this.tools.get(req.tool_name);
    if (!tool) {
      const near = nearestNames(req.tool_name, this.names());
      return refuse(req.tool_name, {
        code: 'TOOL_NOT_FOUND',
        message: near.length
          ? `no tool named ${req.tool_name}; did you mean ${near.join(' or ')}?`
          : `no tool named ${req.tool_name}; GET /v1/tools lists the registry`,
        details: { did_you_mean: near },
      });
    }
    const params = structuredClone(req.params);
    if (!tool.validate(params)) {
      const problems = explain(tool.validate.errors ?? [], req.params, tool.fields);
      return refuse(tool.name, {
        code: 'INVALID_PARAMS',
        message: `${tool.name}: ${problemsLine(problems)}`,
        details: { problems },
      });
    }
    const channel: Channel = req.channel ?? tool.channel;
    if (channel === 'sync' && asyncOnly(tool) && !o.wait) {
      const why = tool.estimateMs !== undefined ? `takes about ${tool.estimateMs} ms` : 'is declared async';
      return refuse(tool.name, {
        code: 'INVALID_PARAMS',
        message: `${tool.name} ${why}, too long to wait for on sync; call it again with channel: "async" and GET /v1/touch/${requestId}`,
        details: {
          problems: [{ path: 'channel', message: 'use "async" (or "stream")', keyword: 'channel' }],
        },
      });
    }
    const callbackWhy =
      req.callback !== undefined ? callbackProblem(req.callback, channel, this.d.delivery()) : undefined;
    if (callbackWhy)
      return refuse(tool.name, {
        code: 'INVALID_PARAMS',
        message: `callback ${req.callback} ${callbackWhy}`,
        details: { problems: [{ path: 'callback', message: callbackWhy, keyword: 'callback' }] },
      });
    if (req.retry > 0 && tool.permission !== 'read') {
      return refuse(tool.name, {
        code: 'INVALID_PARAMS',
        message: `${tool.name} is a ${tool.permission} tool; the gateway never repeats a write, so retry must be 0`,
        details: { problems: [{ path: 'retry', message: 'must be 0 for this tool', keyword: 'retry' }] },
      });
    }
    const timeoutMs = Math.min(tool.timeoutMs, req.timeout !== undefined ? req.timeout * 1000 : Infinity);
    const digest = jsonDigest({ tool: tool.name, params });
    const caller = c.principal.name;

    // A fresh id cannot be in use; only a caller's own id is looked up (idempotency, approval retries).
    const existing = req.request_id !== undefined ? await this.row(caller, requestId) : undefined;
    if (existing)
      return this.again(existing, tool, digest, params, c, channel, timeoutMs, req.retry, o, cost);

    const cap = this.d.config.touch_cap_per_task;
    if (c.task_id && cap > 0) {
      const [row] = await this.d.db.query<{ n: number }>(q.countTaskTouches(this.d.tenant, c.task_id));
      if (Number(row?.n ?? 0) >= cap)
        return refuse(tool.name, {
          code: 'TOUCH_CAP',
          message: `task ${c.task_id} made ${cap} touches, its cap; stop calling tools and report what you have`,
          details: { cap },
        });
    }
    const release = this.concurrency.tryAcquire(tool.name, tool.concurrency);
    if (!release)
      return refuse(tool.name, {
        code: 'CONCURRENCY_LIMIT',
        message: `${tool.name} already runs ${tool.concurrency} calls, its limit; retry in a moment`,
        details: { limit: tool.concurrency },
      });
    let handedOff = false;
    try {
      const owner = await this.ownerOf(c);
      const now = this.d.now();
      const intent = intentOf(tool, params, c);
      let requested: Envelope | undefined;
      const record = async (tx: Db): Promise<Envelope> => {
        const inserted = await tx.query(
          q.insertTouch({
            tenant_id: this.d.tenant,
            caller,
            request_id: requestId,
            task_id: c.task_id,
            owner,
            tool: tool.name,
            channel,
            params_digest: digest,
            status: 'running',
            approval_id: null,
            response_ref: null,
            error_code: null,
            summary: null,
            cost_ms: null,
            created_at: now,
            updated_at: now,
            deadline_at: now + timeoutMs,
            expires_at: now + this.d.config.result_ttl_seconds * 1000,
            callback: req.callback ?? null,
          }),
        );
        if (inserted.length === 0) throw new Duplicate();
        const sealed = await this.d.vault.put(JSON.stringify({ tool: tool.name, params }), {
          tenantId: this.d.tenant,
          ttlMs: this.d.vaultTtlMs,
          db: tx,
        });
        requested = await this.d.emit(
          requestedEvent(requestId, tool, params, digest, channel, c, sealed),
          tx,
        );
        return requested;
      };
      let decision: GateDecision;
      try {
        decision = await this.decide(intent, c, record);
        if (!requested) requested = await this.d.db.tx(record);
      } catch (err) {
        if (err instanceof Duplicate) {
          const row = await this.row(caller, requestId);
          if (row) return this.again(row, tool, digest, params, c, channel, timeoutMs, req.retry, o, cost);
        }
        throw err;
      }
      const cause = requested;
      if (decision.decision === 'require_approval' && decision.approval_id) {
        // Nobody holds a slot while a person decides; the run after approval takes one.
        release();
        const approvalId = decision.approval_id;
        await this.d.db.query(q.markAwaiting(this.d.tenant, caller, requestId, approvalId, this.d.now()));
        if (channel === 'async' && !o.wait && this.d.approvals()) {
          this.track(
            this.waitThenRun(
              caller,
              requestId,
              approvalId,
              tool,
              digest,
              params,
              c,
              timeoutMs,
              req.retry,
              cost,
            ),
          );
          return {
            request_id: requestId,
            ok: true,
            status: 'awaiting_approval',
            data: { approval_id: approvalId },
            cost_ms: cost(),
          };
        }
        return {
          request_id: requestId,
          ok: false,
          status: 'awaiting_approval',
          error: approvalRequired(approvalId, decision.reason_code, requestId),
          cost_ms: cost(),
        };
      }
      const run = this.afterDecision(
        decision,
        tool,
        params,
        c,
        owner,
        requestId,
        cause,
        timeoutMs,
        req.retry,
        o,
        cost,
      );
      if (
        channel === 'async' &&
        !o.wait &&
        (decision.decision === 'allow' || decision.decision === 'modify')
      ) {
        handedOff = true;
        this.track(run.finally(release));
        return { request_id: requestId, ok: true, status: 'running', cost_ms: cost() };
      }
      return await run;
    } finally {
      if (!handedOff) release();
    }
  }

  /** The decision, turned into a run (allow, modify), a wait (approval) or a refusal (deny, defer). */
  private async afterDecision(
    decision: GateDecision,
    tool: Tool,
    params: Record<string, unknown>,
    c: TouchCaller,
    owner: string,
    requestId: string,
    cause: Envelope,
    timeoutMs: number,
    retry: number,
    o: TouchOptions,
    cost: () => number,
  ): Promise<TouchResponse> {
    const end = (e: TouchError) => this.finish(requestId, tool, c, owner, cause, { error: e }, cost());
    switch (decision.decision) {
      case 'allow':
        return this.execute(
          tool,
          params,
          c,
          owner,
          requestId,
          cause,
          timeoutMs,
          retry,
          o,
          cost,
          undefined,
          basisOf(decision),
        );
      case 'modify': {
        const changed = structuredClone(decision.input ?? params);
        if (!tool.validate(changed))
          return end({
            code: 'DENIED',
            message: `the policy rewrote the parameters of ${tool.name} into ones its schema refuses`,
            details: { reason_code: 'MODIFIED_INPUT_INVALID', rule: decision.matched_rules[0]?.id ?? null },
          });
        return this.execute(tool, changed, c, owner, requestId, cause, timeoutMs, retry, o, cost, undefined, {
          ...basisOf(decision),
          plan_digest: jsonDigest({ tool: tool.name, params: changed }),
        });
      }
      default:
        return end(denial(decision, tool));
    }
  }

  /** An async touch that needs a person: waits for the decision in the background, then runs. */
  private async waitThenRun(
    caller: string,
    requestId: string,
    approvalId: string,
    tool: Tool,
    digest: string,
    params: Record<string, unknown>,
    c: TouchCaller,
    timeoutMs: number,
    retry: number,
    cost: () => number,
  ): Promise<void> {
    const approvals = this.d.approvals();
    if (!approvals) return;
    const view = await approvals.wait(approvalId, APPROVAL_WAIT_MS, this.stopping.signal);
    if (!view || view.state === 'pending') return; // the gateway stops: a POST with the same id resumes
    const row = await this.row(caller, requestId);
    if (row?.status === 'awaiting_approval')
      await this.again(row, tool, digest, params, c, 'async', timeoutMs, retry, {}, cost);
  }

  /** A request id seen before: same touch → its answer (or its approval's); another touch → refused. */
  private async again(
    row: q.TouchRow,
    tool: Tool,
    digest: string,
    params: Record<string, unknown>,
    c: TouchCaller,
    channel: Channel,
    timeoutMs: number,
    retry: number,
    o: TouchOptions,
    cost: () => number,
  ): Promise<TouchResponse> {
    if (row.tool !== tool.name || row.params_digest !== digest)
      return failed(
        row.request_id,
        {
          code: 'INVALID_PARAMS',
          message: `request_id ${row.request_id} was used for another touch; give this one a new request_id`,
          details: { problems: [{ path: 'request_id', message: 'is already used', keyword: 'request_id' }] },
        },
        cost(),
      );
    if (row.status === 'awaiting_approval') {
      const release = this.concurrency.tryAcquire(tool.name, tool.concurrency);
      if (!release)
        return failed(
          row.request_id,
          {
            code: 'CONCURRENCY_LIMIT',
            message: `${tool.name} already runs ${tool.concurrency} calls, its limit; retry in a moment`,
            details: { limit: tool.concurrency },
          },
          cost(),
        );
      try {
        return await this.resume(
          row,
          tool,
          params,
          c,
          timeoutMs,
          retry,
          { ...o, wait: o.wait ?? channel !== 'async' },
          cost,
        );
      } finally {
        release();
      }
    }
    return (await this.status(c.principal.name, row.request_id, row))!;
  }

  /** The retry of a touch that waited for a person: approved → the re-check, then the run. */
  private async resume(
    row: q.TouchRow,
    tool: Tool,
    params: Record<string, unknown>,
    c: TouchCaller,
    timeoutMs: number,
    retry: number,
    o: TouchOptions,
    cost: () => number,
  ): Promise<TouchResponse> {
    const approvalId = row.approval_id!;
    const view = await this.d.approvals()?.get(approvalId);
    const cause = { task_id: row.task_id, session_id: c.session_id ?? null };
    // The intent's chain, through the approval's request event: the run joins it (src/effects trace).
    const chain = view?.correlation_id ?? null;
    const refusal = (code: 'DENIED', reason: string, message: string) =>
      this.finish(
        row.request_id,
        tool,
        c,
        row.owner,
        cause,
        { error: { code, message, details: { reason_code: reason, approval_id: approvalId } } },
        cost(),
      );
    if (!view || view.state === 'pending')
      return {
        request_id: row.request_id,
        ok: false,
        status: 'awaiting_approval',
        error: approvalRequired(approvalId, 'PENDING', row.request_id),
        cost_ms: cost(),
      };
    if (view.state === 'rejected')
      return refusal(
        'DENIED',
        'APPROVAL_REJECTED',
        `a person rejected ${tool.name}${view.comment ? `: ${view.comment}` : ''}`,
      );
    if (view.state === 'expired')
      return refusal(
        'DENIED',
        'APPROVAL_EXPIRED',
        `nobody approved ${tool.name} in time; ask again with a new request_id`,
      );
    if (view.recheck?.outcome === 'no_capability')
      return refusal(
        'DENIED',
        'APPROVAL_RECHECK_DENIED',
        `${tool.name} was approved, but the policy in force no longer allows it`,
      );
    // The approval's capability is checked where it is used: one minted before a freeze (a breaker's
    // trip) or a revocation no longer runs a side effect (issue 20 point 3; reach/frozen.test.ts).
    const gate = this.d.gate();
    if (view.capability && gate?.verifyIssued) {
      const intent = intentOf(tool, params, c);
      const checked = await gate.verifyIssued({
        token: view.capability.token,
        plan: {
          tool: intent.tool,
          action: intent.action ?? null,
          resource: intent.resource ?? null,
          input: intent.input,
        },
      });
      if (!checked.ok)
        return refusal(
          'DENIED',
          checked.reason === 'FROZEN' ? 'FROZEN_READ_ONLY' : `CAPABILITY_${checked.reason}`,
          `${tool.name} was approved, but its capability no longer holds: ${checked.detail ?? checked.reason}`,
        );
    }
    const claimed = await this.d.db.query(
      q.markRunning(this.d.tenant, row.caller, row.request_id, this.d.now() + timeoutMs, this.d.now()),
    );
    if (claimed.length === 0) return (await this.status(row.caller, row.request_id))!;
    return this.execute(
      tool,
      params,
      c,
      row.owner,
      row.request_id,
      cause,
      timeoutMs,
      retry,
      o,
      cost,
      view.plan_digest,
      {
        plan_digest: view.plan_digest,
        capability_id: view.capability?.id ?? null,
        // The revision serving when it runs: the approval's re-check was made under it.
        policy_revision: this.d.gate()?.policy?.().revision ?? null,
        approval_id: approvalId,
        correlation_id: chain,
      },
    );
  }

  /** Runs the backend under the deadline; the result (or failure) is processed, logged and answered. */
  private async execute(
    tool: Tool,
    params: Record<string, unknown>,
    c: TouchCaller,
    owner: string,
    requestId: string,
    cause: Cause,
    timeoutMs: number,
    retry: number,
    o: TouchOptions,
    cost: () => number,
    approvedDigest: string | undefined,
    basis?: Basis,
  ): Promise<TouchResponse> {
    if (tool.permission === 'admin') {
      // Seed §3.3: an admin tool is checked again where it executes, against the policy serving now.
      const again = await this.recheck(tool, params, c, approvedDigest);
      if (again) return this.finish(requestId, tool, c, owner, cause, { error: again }, cost());
    }
    const partial = o.onPartial ? (text: string) => o.onPartial!(redactText(text, tool.redact)) : undefined;
    const effect = await this.prepareEffect(tool, params, c, requestId, cause, basis);
    let tries = 0;
    let outcome: Outcome;
    for (;;) {
      outcome = await attempt(tool, params, {
        caller: c,
        owner,
        timeoutMs,
        maxBytes: this.d.config.max_result_bytes,
        stopping: this.stopping.signal,
        onPartial: partial,
        logger: this.d.logger,
      });
      const retryable =
        'error' in outcome && outcome.error.code === 'TOOL_FAILED' && tool.permission === 'read';
      if (!retryable || tries >= retry) break;
      tries++;
    }
    if (effect) await effect(receiptOf(outcome));
    return this.finish(requestId, tool, c, owner, cause, outcome, cost());
  }

  /**
   * A write or admin tool (not memory, which stays inside the gateway) is an effect: prepared before
   * the backend runs, with the key from the plan digest and the capability; the returned function
   * records its receipt.
   */
  private async prepareEffect(
    tool: Tool,
    params: Record<string, unknown>,
    c: TouchCaller,
    requestId: string,
    cause: Cause,
    basis: Basis | undefined,
  ): Promise<((r: EffectReceipt) => Promise<void>) | undefined> {
    const effects = this.d.effects?.();
    if (!effects || tool.permission === 'read' || tool.kind === 'memory') return undefined;
    const plan = basis?.plan_digest || jsonDigest({ tool: tool.name, params });
    const capability = basis?.capability_id ?? null;
    const env = 'event_id' in cause ? cause : undefined;
    await effects.prepared({
      kind: 'reach',
      ref: requestId,
      target: tool.name,
      plan_digest: plan,
      capability_id: capability,
      policy_revision: basis?.policy_revision ?? null,
      approval_id: basis?.approval_id ?? null,
      task_id: c.task_id,
      correlation_id: env?.correlation_id ?? basis?.correlation_id ?? null,
      causation_id: env?.event_id ?? null,
    });
    const key = effectKey(plan, capability);
    return async (r) => {
      await effects.receipted(key, r);
    };
  }

  private async recheck(
    tool: Tool,
    params: Record<string, unknown>,
    c: TouchCaller,
    approvedDigest: string | undefined,
  ): Promise<TouchError | undefined> {
    const gate = this.d.gate();
    const intent = intentOf(tool, params, c);
    if (!gate)
      return {
        code: 'DENIED',
        message: 'the policy gate is not running',
        details: { reason_code: 'GATE_UNAVAILABLE' },
      };
    const d =
      approvedDigest !== undefined && gate.evaluateApproved
        ? await gate.evaluateApproved(intent, { principal: c.principal }, approvedDigest)
        : await gate.evaluate(intent, { principal: c.principal });
    if (d.decision === 'allow') return undefined;
    if (approvedDigest !== undefined && d.decision === 'require_approval') return undefined;
    return {
      ...denial(d, tool),
      message: `${tool.name} was re-checked where it runs and refused (${d.reason_code})`,
    };
  }

  /** Processes the outcome, seals the response in the vault, updates the row, logs — one commit. */
  private async finish(
    requestId: string,
    tool: Tool,
    c: TouchCaller,
    owner: string,
    cause: Cause,
    outcome: { data: unknown } | { error: TouchError },
    costMs: number,
  ): Promise<TouchResponse> {
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
    await this.d.db.tx(async (tx) => {
      const sealed = await this.d.vault.put(JSON.stringify(response), {
        tenantId: this.d.tenant,
        ttlMs: this.d.vaultTtlMs,
        db: tx,
      });
      const [row] = await tx.query<{ callback: string | null }>(
        q.finishTouch({
          tenant: this.d.tenant,
          caller: c.principal.name,
          requestId,
          status,
          responseRef: sealed.ref,
          errorCode: response.error?.code ?? null,
          summary: tool.kind === 'memory' ? null : redactText(summary, tool.redact),
          costMs: Math.round(costMs),
          now: this.d.now(),
        }),
      );
      const completed = await this.d.emit(
        completedEvent(cause, requestId, tool.name, tool.kind, c, response, sealed),
        tx,
      );
      if (row?.callback) await this.push(tx, row.callback, response, tool.name, c, completed.event_id);
      if (c.task_id && tool.kind !== 'memory')
        await archiveShortTerm(tx, this.d, owner, c.task_id, this.d.config.memory.short_term);
    });
    return response;
  }

  /** The push callback, in the finishing commit: the result and its delivery are stored together. */
  private async push(
    tx: Db,
    destination: string,
    response: TouchResponse,
    tool: string,
    c: TouchCaller,
    eventId: string,
  ): Promise<void> {
    const delivery = this.d.delivery();
    if (!delivery) {
      // The module was configured away since the touch was accepted: the result stays readable by GET.
      this.d.logger.warn({ request_id: response.request_id }, 'reach: no delivery module for a callback');
      return;
    }
    const message = callbackMessage(response, tool, c.principal.name, c.task_id, eventId, this.d.publicUrl);
    await delivery.enqueue(tx, { eventId, destination, message });
  }

  /** One event for a touch refused before the gate: nothing ran, nothing was sealed. */
  private async refused(
    requestId: string,
    tool: string,
    c: TouchCaller,
    e: TouchError,
    costMs: number,
  ): Promise<void> {
    const response = failed(requestId, e, costMs);
    await this.d.emit(
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

  private async decide(
    intent: GateIntent,
    c: TouchCaller,
    record: (tx: Db) => Promise<Envelope>,
  ): Promise<GateDecision> {
    const gate = this.d.gate();
    if (!gate) {
      // Fail closed: without a policy, nothing is reached (the hook route's rule, docs/reach.md).
      await this.d.db.tx(record);
      return gateUnavailable();
    }
    return gate.evaluate(intent, { principal: c.principal, record });
  }

  private async row(caller: string, requestId: string): Promise<q.TouchRow | undefined> {
    const [row] = await this.d.db.query<q.TouchRow>(q.selectTouch(this.d.tenant, caller, requestId));
    return row;
  }

  /** GET /v1/touch/{id}: the caller's own touch (status.ts). Reads only. */
  async status(caller: string, requestId: string, known?: q.TouchRow): Promise<TouchResponse | undefined> {
    const row = known ?? (await this.row(caller, requestId));
    return row ? describeTouch(row, this.d.now(), this.d.vault) : undefined;
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((err: unknown) => this.d.logger.error({ err }, 'reach: a background touch failed'));
    this.background.add(t);
    void t.finally(() => this.background.delete(t));
  }

  /** Stops running tools (their calls end as TOOL_FAILED `stopping`) and waits for the answers to be logged. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.background]);
    await Promise.allSettled([...this.tools.values()].map((t) => t.backend.close?.()));
  }
}
