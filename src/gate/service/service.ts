import type { Envelope, EnvelopeInput } from '../../envelope/index.js';
import { causedBy, isId } from '../../envelope/index.js';
import type { Principal } from '../../kernel/module.js';
import type { GateDeps as ModuleDeps } from '../module.js';
import {
  approvalPlan,
  type GateContext,
  type GateDecision,
  type GateIntent,
  type GateService,
  type IntentReader,
  type PolicyView,
  type ShadowReport,
  type ShadowRequest,
  type Simulation,
} from '../../gate/port.js';
import type { Db } from '../../store/port.js';
import { evaluateApproved } from '../approved.js';
import { DEFAULT_EVENT_TYPE, type Evaluation, evaluateWithTrace } from '../evaluate.js';
import type { CapabilitySigner, GateContext as EngineContext, Intent, TaskFacts } from '../types.js';
import type { PolicyHolder } from './holder.js';
import type { IncidentStore } from './incidents-store.js';
import { checkIssued, type IssuedCheck } from './verify.js';
import type { CapabilityCheck } from '../capability.js';
import { actionText, decisionEvents } from './record.js';
import { compileDraft, runShadow } from './shadow.js';
import type { HistoryStore } from './history-store.js';
import { Deferrals } from './deferrals.js';
import { historyEntry, historyKey } from '../history.js';
import { AppError } from '../../errors/index.js';
import type { TaskView } from '../../tasks/port.js';

const DAY_MS = 86_400_000;

export interface GateDeps {
  s: ModuleDeps;
  holder: PolicyHolder;
  incidents: IncidentStore;
  /** Undefined: decisions carry no capability (and verify answers UNKNOWN_KEY). */
  signer: CapabilitySigner | undefined;
  /** Classifies a runtime's own tool name for a dry run, as `POST /v1/gate/evaluate` does. */
  intents?: IntentReader;
  /** CEL's `history` and `session.untrusted`, per session. */
  history: HistoryStore;
}

/**
 * The gate behind `services.gate`: gathers the facts the engine needs (task, budgets, freeze, key),
 * decides, creates the approval a `require_approval` asks for, and writes it all to the log.
 */
export class Gate implements GateService {
  private readonly deferrals = new Deferrals();

  constructor(private readonly d: GateDeps) {}

  evaluate(intent: GateIntent, ctx: GateContext): Promise<GateDecision> {
    return this.run(intent, ctx);
  }

  /** The re-check when a person approved `planDigest`; never creates another approval. */
  evaluateApproved(intent: GateIntent, ctx: GateContext, planDigest: string): Promise<GateDecision> {
    return this.run(intent, ctx, planDigest);
  }

  policy(): PolicyView {
    const status = this.d.holder.status();
    const rules = (this.d.holder.current()?.rules ?? []).map(({ rule, origin }) => ({
      id: rule.id,
      decision: rule.decision,
      reason_code: rule.reason_code,
      priority: rule.priority,
      when: rule.when,
      tools: rule.match?.tools ?? null,
      kinds: rule.match?.kinds ?? null,
      description: rule.description ?? null,
      source: origin ? { file: origin.file, line: origin.line } : null,
    }));
    return { revision: status.revision, loaded_at: status.loaded_at, last_error: status.last_error, rules };
  }

  /** A draft policy over the recorded intents of a window (service/shadow.ts); reads only. */
  shadow(req: ShadowRequest): Promise<ShadowReport> {
    const { s } = this.d;
    const draft = compileDraft(req.policyYaml);
    return runShadow(
      {
        log: s.log,
        vault: s.vault,
        intents: this.d.intents,
        tenant: s.config.tenant.id,
        now: s.now,
        priorHistory: (key, before) => this.d.history.read(key, before),
        task: async (id: string) => {
          const view = await this.taskView(id);
          return view
            ? { owner: view.owner, created_at: view.created_at, untrusted: view.untrusted_input === true }
            : undefined;
        },
      },
      draft,
      req,
    );
  }

  async markUntrusted(scope: { session_id?: string; task_id?: string }, source: string): Promise<void> {
    const key = historyKey(scope.session_id, scope.task_id);
    if (!key) throw new AppError('validation_failed', 'name the session_id or task_id to mark untrusted');
    await this.d.history.markUntrusted(key, this.d.s.now(), source);
  }

  /** The facts `run` gathers, and the pure evaluation; without a signer no capability is minted. */
  /** Whether the tenant, or the agent named, is frozen (`switchboard incidents freeze`). */
  frozen(agent: string | null): Promise<boolean> {
    return this.d.incidents.isFrozen(this.d.s.config.tenant.id, agent);
  }

  /** A capability already issued, checked before it is used: revoked and frozen ones fail (verify.ts). */
  verifyIssued(c: IssuedCheck): Promise<CapabilityCheck> {
    return checkIssued({ ...this.d, now: this.d.s.now }, c);
  }

  async simulate(asked: GateIntent, principal: Principal): Promise<Simulation> {
    const classified =
      asked.kind === undefined && asked.runtime
        ? this.d.intents?.classify(asked.runtime, asked.tool, asked.input)
        : undefined;
    const intent = classified ? { ...asked, kind: classified.kind, args: classified.args } : asked;
    const { engineIntent, engineCtx } = await this.facts(intent, { principal });
    const evaluation = evaluateWithTrace(this.d.holder.current(), engineIntent, {
      ...engineCtx,
      signer: undefined,
    });
    const decision: GateDecision = { ...evaluation.decision };
    if (evaluation.trace.policy_unavailable) decision.tags = ['policy_unavailable'];
    return {
      decision,
      considered: evaluation.trace.considered,
      errors: evaluation.trace.errors,
      risk: evaluation.trace.risk,
    };
  }

  private async facts(intent: GateIntent, ctx: GateContext) {
    const { s } = this.d;
    const now = new Date(s.now());
    const tenant = s.config.tenant.id;
    const taskId = intent.task_id ?? ctx.principal.task_id ?? null;
    const view = await this.taskView(taskId);
    const task = taskFacts(taskId, view, now);
    const key = historyKey(intent.session_id, taskId);
    const history = key ? await this.d.history.get(key) : undefined;
    const engineIntent: Intent = {
      tool: intent.tool,
      input: intent.input,
      action: intent.action ?? null,
      resource: intent.resource ?? null,
      runtime: intent.runtime ?? null,
      event_type: intent.event_type ?? ctx.cause?.type ?? DEFAULT_EVENT_TYPE,
      kind: intent.kind ?? 'other',
      ...(intent.args ? { args: intent.args } : {}),
      ...(intent.untrusted ? { untrusted: true } : {}),
    };
    const engineCtx: EngineContext = {
      now,
      tenant_id: tenant,
      agent_id: ctx.principal.name,
      task,
      budgets: {
        steps: task.steps ?? 0,
        wall_time_seconds: task.wall_time_seconds ?? 0,
        ...(await s.budgets?.facts(
          {
            tenant_id: tenant,
            agent_id: ctx.principal.name,
            task_id: taskId,
            session_id: intent.session_id ?? null,
          },
          s.now(),
        )),
      },
      frozen: await this.d.incidents.isFrozen(tenant, ctx.principal.name),
      history: history?.window.entries ?? [],
      ...(history ? { window: history.window } : {}),
      session: {
        id: intent.session_id ?? null,
        untrusted: history?.untrustedSince != null || view?.untrusted_input === true,
        ...(history
          ? { kinds: history.window.kinds, hosts: history.window.hosts, files: history.window.files }
          : {}),
      },
      envelope: ctx.cause ?? previewEnvelope(engineIntent, ctx.principal, tenant, taskId, intent.session_id),
      ...(this.d.signer ? { signer: this.d.signer } : {}),
    };
    return { engineIntent, engineCtx, taskId };
  }

  private async run(intent: GateIntent, ctx: GateContext, approvedDigest?: string): Promise<GateDecision> {
    const compiled = this.d.holder.current();
    const { engineIntent, engineCtx, taskId } = await this.facts(intent, ctx);
    if (ctx.record && approvedDigest === undefined) {
      return this.recordAndDecide(intent, ctx, ctx.record, engineIntent, engineCtx, taskId);
    }
    const { s } = this.d;
    const evaluation =
      approvedDigest === undefined
        ? evaluateWithTrace(compiled, engineIntent, engineCtx)
        : evaluateApproved(compiled, engineIntent, engineCtx, approvedDigest);
    let decision: GateDecision = { ...evaluation.decision };
    if (evaluation.trace.policy_unavailable) decision.tags = ['policy_unavailable'];

    if (approvedDigest === undefined) decision = this.held(intent, ctx, taskId, evaluation, decision);
    if (approvedDigest !== undefined) {
      const root = { task_id: taskId, session_id: intent.session_id ?? null };
      await s.db.tx((tx) =>
        this.record(tx, root, evaluation, decision, engineIntent, engineCtx.task, approvedDigest),
      );
      return decision;
    }
    const ask = (tx: Db) => this.requested(tx, engineIntent, intent, ctx, taskId, evaluation);
    if (decision.decision !== 'require_approval') {
      // One transaction, so one commit (one fsync) per decision: the request and its answer together.
      await s.db.tx(async (tx) =>
        this.record(tx, await ask(tx), evaluation, decision, engineIntent, engineCtx.task),
      );
      return decision;
    }
    // The approval module writes its own transaction, caused by the request, so the request commits first.
    const requested = await s.db.tx(ask);
    decision = await this.askApproval(decision, intent, ctx.principal, taskId, requested);
    await s.db.tx((tx) => this.record(tx, requested, evaluation, decision, engineIntent, engineCtx.task));
    return decision;
  }

  /**
   * The hook route's path: the caller's event, the request and the decision in one transaction (one
   * commit per tool call). Every read happened before it: inside, only this transaction's port is used.
   * A `require_approval` commits the request first, as `run` does, because the approval is its own.
   */
  private async recordAndDecide(
    intent: GateIntent,
    ctx: GateContext,
    recordCause: (tx: Db) => Promise<Envelope>,
    engineIntent: Intent,
    engineCtx: EngineContext,
    taskId: string | null,
  ): Promise<GateDecision> {
    const { s } = this.d;
    const compiled = this.d.holder.current();
    if (ctx.later) {
      const early = evaluateWithTrace(compiled, engineIntent, engineCtx);
      let d: GateDecision = { ...early.decision };
      if (early.trace.policy_unavailable) d.tags = ['policy_unavailable'];
      d = this.held(intent, ctx, taskId, early, d);
      if (d.decision !== 'require_approval') {
        const decided = d;
        ctx.later(async (tx) => {
          const cause = await recordCause(tx);
          const req = await this.requested(tx, engineIntent, intent, { ...ctx, cause }, taskId, early);
          await this.record(tx, req, early, decided, engineIntent, engineCtx.task);
          return cause;
        });
        return decided;
      }
    }
    let evaluation: Evaluation | undefined;
    let decision: GateDecision | undefined;
    const requested = await s.db.tx(async (tx) => {
      const cause = await recordCause(tx);
      // The caller names the event type in the intent (it knows it before the event exists).
      evaluation = evaluateWithTrace(compiled, engineIntent, { ...engineCtx, envelope: cause });
      decision = { ...evaluation.decision };
      if (evaluation.trace.policy_unavailable) decision.tags = ['policy_unavailable'];
      decision = this.held(intent, ctx, taskId, evaluation, decision);
      const req = await this.requested(tx, engineIntent, intent, { ...ctx, cause }, taskId, evaluation);
      if (decision.decision !== 'require_approval')
        await this.record(tx, req, evaluation, decision, engineIntent, engineCtx.task);
      return req;
    });
    if (!evaluation || !decision) throw new Error('the gate transaction ended without a decision');
    if (decision.decision !== 'require_approval') return decision;
    decision = await this.askApproval(decision, intent, ctx.principal, taskId, requested);
    const decided = decision;
    const evaluated = evaluation;
    await s.db.tx((tx) => this.record(tx, requested, evaluated, decided, engineIntent, engineCtx.task));
    return decision;
  }

  /** A retry of a deferred plan before its `retry_after` keeps that defer (service/deferrals.ts). */
  private held(
    intent: GateIntent,
    ctx: GateContext,
    taskId: string | null,
    evaluation: Evaluation,
    decision: GateDecision,
  ): GateDecision {
    const scope = historyKey(intent.session_id, taskId) ?? `a:${ctx.principal.name}`;
    const key = `${scope}|${evaluation.trace.original_plan_digest}`;
    const out = this.deferrals.apply(key, decision, this.d.s.now());
    if (out.held) evaluation.trace.held = true;
    return out.decision;
  }

  private async taskView(taskId: string | null): Promise<TaskView | undefined> {
    if (!taskId || !isId('task', taskId) || !this.d.s.tasks) return undefined;
    return this.d.s.tasks.get(taskId);
  }

  /** `agent.tool.requested`, unless the caller's event already is one; the raw input goes to the vault. */
  private async requested(
    tx: Db,
    intent: Intent,
    raw: GateIntent,
    ctx: GateContext,
    taskId: string | null,
    evaluation: Evaluation,
  ): Promise<Envelope> {
    const cause = ctx.cause;
    if (cause?.type === 'agent.tool.requested') return cause;
    const { s } = this.d;
    const stored =
      cause?.payload_ref && cause.payload_digest
        ? { ref: cause.payload_ref, digest: cause.payload_digest }
        : // Kind, args and the untrusted mark too, so a shadow run re-decides the intent as it was asked.
          await this.seal(tx, {
            tool: intent.tool,
            action: intent.action,
            resource: intent.resource,
            input: intent.input,
            kind: intent.kind ?? 'other',
            ...(intent.args ? { args: intent.args } : {}),
            ...(intent.untrusted ? { untrusted: true } : {}),
          });
    const input: EnvelopeInput = {
      type: 'agent.tool.requested',
      actor: { agent_id: ctx.principal.name },
      runtime: { kind: intent.runtime ?? null },
      execution: { task_id: taskId, session_id: raw.session_id ?? null },
      subject: {
        tool: intent.tool,
        action: intent.action ?? null,
        resource_ref: intent.resource ?? null,
        kind: intent.kind ?? 'other',
      },
      policy: { revision: evaluation.decision.policy_revision, risk: evaluation.trace.risk },
      payload_ref: stored.ref,
      payload_digest: stored.digest,
      redacted_summary: {
        plan_digest: evaluation.trace.original_plan_digest,
        input_keys: Object.keys(intent.input).slice(0, 50),
      },
    };
    return s.emit(cause ? causedBy(cause, input) : input, tx);
  }

  private async askApproval(
    decision: GateDecision,
    intent: GateIntent,
    principal: Principal,
    taskId: string | null,
    cause: Envelope,
  ): Promise<GateDecision> {
    const approvals = this.d.s.approvals;
    if (!approvals) {
      // Nobody could ever approve: waiting would be a deny that takes longer.
      return { ...decision, decision: 'deny', reason_code: 'APPROVALS_UNAVAILABLE' };
    }
    let view: Awaited<ReturnType<typeof approvals.request>>;
    try {
      view = await approvals.request({
        action: actionText(intent),
        reason: decision.reason_code,
        plan: approvalPlan(intent),
        ...(taskId ? { task_id: taskId } : {}),
        ...(intent.session_id ? { session_id: intent.session_id } : {}),
        requested_by: principal,
        cause,
      });
    } catch (err) {
      this.d.s.logger.error({ err, tool: intent.tool }, 'gate: could not create the approval; denying');
      return { ...decision, decision: 'deny', reason_code: 'APPROVALS_UNAVAILABLE' };
    }
    return { ...decision, approval_id: view.id };
  }

  private async record(
    tx: Db,
    cause: Envelope | { task_id: string | null; session_id: string | null },
    evaluation: Evaluation,
    decision: GateDecision,
    plan: Intent,
    task: Partial<TaskFacts> | undefined,
    approved?: string,
  ): Promise<void> {
    const { s } = this.d;
    const m = evaluation.trace.modify;
    const modifiedRef = m
      ? await this.seal(tx, { original: m.original, replacement: m.replacement })
      : undefined;
    const events = decisionEvents(
      cause,
      {
        decision,
        trace: evaluation.trace,
        tool: plan.tool,
        kind: plan.kind ?? 'other',
        action: plan.action ?? null,
        resource: plan.resource ?? null,
        ...(approved ? { approved_plan_digest: approved } : {}),
        ...(task?.id ? { task_steps: task.steps ?? 0 } : {}),
      },
      modifiedRef,
    );
    for (const e of events) await s.emit(e, tx);
    // The intent joins its session's history; an approved plan's re-check is the same intent again.
    if (!('event_id' in cause) || approved !== undefined) return;
    const key = historyKey(cause.execution.session_id, cause.execution.task_id);
    if (key) {
      const entry = historyEntry(plan, decision.decision, new Date(cause.occurred_at));
      await this.d.history.append(tx, key, cause.event_id, entry);
    }
  }

  private seal(tx: Db, value: unknown) {
    const { s } = this.d;
    return s.vault.put(JSON.stringify(value), {
      tenantId: s.config.tenant.id,
      ttlMs: s.config.vault.retention_days * DAY_MS,
      db: tx,
    });
  }
}

function taskFacts(taskId: string | null, view: TaskView | undefined, now: Date): Partial<TaskFacts> {
  if (!view) return { id: taskId, steps: 0, wall_time_seconds: 0 };
  return {
    id: view.id,
    owner: view.owner,
    steps: view.steps,
    wall_time_seconds: Math.max(0, Math.floor((now.getTime() - Date.parse(view.created_at)) / 1000)),
  };
}

/** What CEL sees as `envelope` when the intent came over the API and has no event yet. */
function previewEnvelope(
  intent: Intent,
  principal: Principal,
  tenant: string,
  taskId: string | null,
  sessionId: string | undefined,
): Record<string, unknown> {
  return {
    type: intent.event_type ?? DEFAULT_EVENT_TYPE,
    tenant_id: tenant,
    actor: { user_id: null, agent_id: principal.name },
    runtime: { kind: intent.runtime ?? null, adapter_version: null },
    execution: { task_id: taskId, session_id: sessionId ?? null },
    subject: {
      tool: intent.tool,
      action: intent.action ?? null,
      resource_ref: intent.resource ?? null,
      kind: intent.kind ?? 'other',
    },
  };
}
