import { type Envelope, jsonDigest, newId } from '../envelope/index.js';
import { type GateDecision, type GateIntent, gateUnavailable } from '../gate/port.js';
import type { StoredPayload } from '../log/vault.js';
import type { Db } from '../store/port.js';
import { type ApprovalScope, type Asked, again, waitThenRun } from './approval.js';
import { callbackProblem } from './callback.js';
import type { Channel } from './config.js';
import { approvalRequired, type Cause, denial, intentOf, requestedEvent, sealedIntent } from './events.js';
import { Concurrency } from './guard.js';
import type { TouchCaller } from './port.js';
import type { ParsedTouchRequest, TouchError, TouchResponse } from './protocol.js';
import { failed } from './protocol.js';
import { asyncOnly, type Tool } from './registry.js';
import {
  basisOf,
  execute,
  finish,
  type ReachDeps,
  refused,
  type Run,
  type Settled,
  type TouchOptions,
} from './run.js';
import { explain, problemsLine } from './schema.js';
import * as q from './sql.js';
import { describeTouch } from './status.js';
import { nearestNames } from './suggest.js';

export type { ReachDeps, TouchOptions } from './run.js';

/**
 * The touch engine (seed §3): lookup → parameters against the compiled schema → channel rules →
 * per-task cap → per-tool concurrency → the intent through the gate (deny, approval, modify) → the
 * backend under its deadline → JSON check → context processing (PII out, shape, tokens) → the log.
 * Every step that refuses answers with a code from the closed catalogue (protocol.ts). This file
 * admits a touch and hands it on: to the run path (run.ts) or the approval path (approval.ts).
 *
 * Log shape: a touch that reaches the gate is `agent.touch.requested` (params sealed in the vault,
 * committed in the gate's own decision transaction, so intent, decision and row are one commit) and
 * then `agent.touch.completed` (the processed, redacted response sealed in the vault; outcome, cost,
 * tokens before and after on the event). A read the caller waits for writes both, and the gate's,
 * in one commit after its backend answered (docs/reach.md, "One commit per read touch"). One refused before the gate (unknown tool, bad params, cap,
 * concurrency) is a single `agent.touch.completed` with its code.
 */

class Duplicate extends Error {}

export class Reach {
  readonly concurrency = new Concurrency();
  private readonly background = new Set<Promise<unknown>>();
  private readonly stopping = new AbortController();
  private readonly owners = new Map<string, string>();
  /** Per task, one-commit reads running in this process: no row yet, so the cap counts them here. */
  private readonly unwritten = new Map<string, number>();
  /** What the run and approval paths see of the engine. */
  private readonly scope: ApprovalScope;

  constructor(
    private readonly d: ReachDeps,
    readonly tools: ReadonlyMap<string, Tool>,
  ) {
    this.scope = {
      d,
      stopping: this.stopping.signal,
      concurrency: this.concurrency,
      row: (caller, id) => this.row(caller, id),
      status: (caller, id, known) => this.status(caller, id, known),
    };
  }

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
      await refused(this.d, requestId, tool, c, e, cost());
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
    // The request's params are its own top-level copy (protocol.ts); Ajv's defaults may also fill
    // nested objects, which are still the caller's, so a schema with defaults checks a deep copy.
    const params = tool.fillsDefaults ? structuredClone(req.params) : req.params;
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
    const asked: Asked = { tool, digest, params, c, channel, timeoutMs, retry: req.retry, o, cost };

    // A fresh id cannot be in use; only a caller's own id is looked up (idempotency, approval retries).
    const existing = req.request_id !== undefined ? await this.row(caller, requestId) : undefined;
    if (existing) return again(this.scope, existing, asked);

    const cap = this.d.config.touch_cap_per_task;
    if (c.task_id && cap > 0) {
      const [row] = await this.d.db.query<{ n: number }>(q.countTaskTouches(this.d.tenant, c.task_id));
      // A one-commit read has no row until it ends: the ones running here count too.
      if (Number(row?.n ?? 0) + (this.unwritten.get(c.task_id) ?? 0) >= cap)
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
    // Seed §3.3 lets a read repeat; nothing else is worth a commit before the backend runs (docs/reach.md,
    // "One commit per read touch"). An async touch is read back by GET, so its row is written first.
    const oneCommit = tool.permission === 'read' && (channel !== 'async' || o.wait === true);
    const taskKey = oneCommit ? c.task_id : null;
    if (taskKey) this.unwritten.set(taskKey, (this.unwritten.get(taskKey) ?? 0) + 1);
    try {
      const owner = await this.ownerOf(c);
      const now = this.d.now();
      const intent = intentOf(tool, params, c);
      const payload = sealedIntent(intent);
      let requested: Envelope | undefined;
      // A one-commit read's row is written once, finished (Run.intent): these columns are its outcome,
      // and its intent is already sealed, with the response.
      let settled: Settled | undefined;
      let presealed: StoredPayload | undefined;
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
            ...settled,
          }),
        );
        if (inserted.length === 0) throw new Duplicate();
        const sealed =
          presealed ??
          (await this.d.vault.put(JSON.stringify(payload), {
            tenantId: this.d.tenant,
            ttlMs: this.d.vaultTtlMs,
            db: tx,
          }));
        requested = await this.d.emit(
          requestedEvent(requestId, tool, params, digest, channel, c, sealed),
          tx,
        );
        return requested;
      };
      let decision: GateDecision;
      let commit: ((tx: Db) => Promise<Envelope>) | undefined;
      try {
        decision = await this.decide(intent, c, record, oneCommit ? (fn) => (commit = fn) : undefined);
        if (!requested && !commit) requested = await this.d.db.tx(record);
      } catch (err) {
        if (err instanceof Duplicate) {
          const row = await this.row(caller, requestId);
          if (row) return again(this.scope, row, asked);
        }
        throw err;
      }
      const cause: Cause = requested ?? { task_id: c.task_id, session_id: c.session_id ?? null };
      if (decision.decision === 'require_approval' && decision.approval_id) {
        // Nobody holds a slot while a person decides; the run after approval takes one.
        release();
        const approvalId = decision.approval_id;
        await this.d.db.query(q.markAwaiting(this.d.tenant, caller, requestId, approvalId, this.d.now()));
        if (channel === 'async' && !o.wait && this.d.approvals()) {
          this.track(waitThenRun(this.scope, caller, requestId, approvalId, asked));
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
      const run = this.afterDecision(decision, {
        tool,
        params,
        c,
        owner,
        requestId,
        cause,
        ...(commit
          ? {
              intent: {
                payload,
                write: (tx: Db, s: Settled, stored: StoredPayload) => {
                  settled = s;
                  presealed = stored;
                  return commit!(tx);
                },
              },
            }
          : {}),
        timeoutMs,
        retry: req.retry,
        o,
        cost,
      });
      if (
        channel === 'async' &&
        !o.wait &&
        (decision.decision === 'allow' || decision.decision === 'modify')
      ) {
        handedOff = true;
        this.track(run.finally(release));
        return { request_id: requestId, ok: true, status: 'running', cost_ms: cost() };
      }
      try {
        return await run;
      } catch (err) {
        // The same request id ended first elsewhere (this read ran twice, which a read may): its answer stands.
        if (!(err instanceof Duplicate)) throw err;
        const row = await this.row(caller, requestId);
        if (!row) throw err;
        return again(this.scope, row, asked);
      }
    } finally {
      if (!handedOff) release();
      if (taskKey) {
        const n = (this.unwritten.get(taskKey) ?? 1) - 1;
        if (n > 0) this.unwritten.set(taskKey, n);
        else this.unwritten.delete(taskKey);
      }
    }
  }

  /** The decision, turned into a run (allow, modify), a wait (approval) or a refusal (deny, defer). */
  private async afterDecision(decision: GateDecision, r: Run): Promise<TouchResponse> {
    const { tool, params } = r;
    const end = (e: TouchError) => finish(this.d, r, { error: e }, r.cost());
    switch (decision.decision) {
      case 'allow':
        return execute(this.scope, r, undefined, basisOf(decision));
      case 'modify': {
        const changed = structuredClone(decision.input ?? params);
        if (!tool.validate(changed))
          return end({
            code: 'DENIED',
            message: `the policy rewrote the parameters of ${tool.name} into ones its schema refuses`,
            details: { reason_code: 'MODIFIED_INPUT_INVALID', rule: decision.matched_rules[0]?.id ?? null },
          });
        return execute(this.scope, { ...r, params: changed }, undefined, {
          ...basisOf(decision),
          plan_digest: jsonDigest({ tool: tool.name, params: changed }),
        });
      }
      default:
        return end(denial(decision, tool));
    }
  }

  /** With `later`, a gate that can hands the writes back to be committed with the outcome (GateContext.later). */
  private async decide(
    intent: GateIntent,
    c: TouchCaller,
    record: (tx: Db) => Promise<Envelope>,
    later?: (commit: (tx: Db) => Promise<Envelope>) => void,
  ): Promise<GateDecision> {
    const gate = this.d.gate();
    if (!gate) {
      // Fail closed: without a policy, nothing is reached (the hook route's rule, docs/reach.md).
      await this.d.db.tx(record);
      return gateUnavailable();
    }
    return gate.evaluate(intent, { principal: c.principal, record, ...(later ? { later } : {}) });
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
