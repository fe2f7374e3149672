import type { Message, Stage } from '../notify/port.js';
import { causedBy, type Envelope, type EnvelopeInput, sha256Hex } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import type { NotifyDeps } from './module.js';
import type { TaskView } from '../tasks/port.js';
import type { Db } from '../store/port.js';
import type { NotifyConfig } from './config.js';
import type { ProgressInput, ProgressResult, ProgressStatus, ReportContext } from './port.js';
import { type ContentInput, gateContent, maskAll } from './content.js';
import { type Decision, decide, dueAt, EMPTY_STATE, flush, type NotifyState } from './governance.js';
import {
  type Draft,
  digestDraft,
  floodDraft,
  progressDraft,
  redactForExternal,
  type Who,
} from './message.js';
import { type CompiledRoute, selectChannels } from './routes.js';
import * as q from './sql.js';
import { type ReplyTarget, replyLink } from './replies.js';
import { applyTemplate } from './templated.js';
import { type CompiledTemplates, templateEngine } from './templates.js';
import { prefix } from '../text/index.js';

/** Task facts kept with the governance state, so a digest flushed later knows whom it is about. */
interface ScopeContext extends Who {
  owner: string;
  correlation_id: string | null;
}

type StoredState = NotifyState & { ctx?: ScopeContext };

export type DispatchOutcome =
  | { kind: 'enqueued'; destinations: string[]; event: Envelope }
  | { kind: 'no_engine'; destinations: string[]; event: Envelope }
  | { kind: 'no_route'; event: Envelope };

/** Reasons recorded on `agent.notification.suppressed`; the payload says which report(s) it covers. */
export type SuppressReason =
  | 'merged_into_digest'
  /** The same failed/blocked text again within `flood_window_seconds`: counted into the flood's digest. */
  | 'flood_folded'
  /** Past `priority_per_hour` priority messages for this scope. */
  | 'priority_cap'
  | 'started_not_sent'
  | 'same_as_last'
  | 'done_already_sent'
  | 'rate_limit'
  | 'superseded'
  | 'no_route'
  | 'no_delivery_engine'
  /** The reporting agent or the tenant is frozen (incidents): nothing is sent until the unfreeze. */
  | 'frozen'
  /** A channel's template failed to render: the built-in message was sent instead. */
  | 'template_failed';

const SUPPRESS_REASON: Record<
  Exclude<Decision['status'], 'sent' | 'queued'>,
  (d: Decision) => SuppressReason
> = {
  merged: (d) =>
    d.status !== 'merged' || d.reason === 'digest'
      ? 'merged_into_digest'
      : d.reason === 'flood'
        ? 'flood_folded'
        : 'started_not_sent',
  deduped: (d) => (d.status === 'deduped' ? d.reason : 'same_as_last'),
  rate_limited: (d) =>
    d.status === 'rate_limited' && d.reason === 'priority_cap' ? 'priority_cap' : 'rate_limit',
};

/**
 * The mouth's one path: a report is gated, governed and routed, and every destination's delivery is
 * queued in the same transaction as the events that explain it. `report` serves `POST /v1/progress`
 * and the MCP tool alike; `dispatch` serves approvals and the supervisor's stalled alerts.
 */
export class Notifier {
  constructor(
    private readonly s: NotifyDeps,
    readonly cfg: NotifyConfig,
    private readonly routes: CompiledRoute[],
    private readonly channels: ReadonlySet<string>,
    private readonly templates: CompiledTemplates = new Map(),
    private readonly engine = templateEngine(),
  ) {}

  async report(input: ProgressInput, ctx: ReportContext): Promise<ProgressResult> {
    const task = ctx.task_id ? await this.s.tasks?.get(ctx.task_id) : undefined;
    // With the tasks module running, a report about a task it does not know is a mistake, not news.
    if (ctx.task_id && this.s.tasks && !task) throw new AppError('not_found', 'no task has this id');
    const scopeCtx: ScopeContext = {
      task_id: ctx.task_id,
      agent: ctx.principal.name,
      owner: task?.owner ?? '',
      correlation_id: task?.correlation_id ?? null,
      ...(task?.title ? { task_title: task.title } : {}),
    };
    const scope = ctx.task_id ?? `key:${ctx.principal.name}`;
    const gate = gateContent(input, this.cfg);
    const now = this.s.now();
    const frozen = await this.frozen(ctx);
    const result = await this.s.db.tx(async (tx) => {
      // The state row is locked before the first append, in the same order as the digest worker, so
      // the two never wait on each other's locks in reverse.
      const state = await this.lock(tx, scope, now);
      // The gate scanned every field already: with nothing found, masking would scan them again for nothing.
      const shown = gate.kind === 'ok' && gate.rewrites.secrets.length === 0 ? input : maskAll(input);
      const reported = await this.s.emit(
        this.reportedEvent(input, shown, ctx, scopeCtx, gate.kind === 'blocked'),
        tx,
      );
      if (gate.kind === 'blocked') {
        await this.s.emit(
          causedBy(reported, {
            type: 'agent.notification.blocked',
            redacted_summary: {
              reason: gate.reason,
              secrets: gate.secrets,
              report_event_id: reported.event_id,
            },
          }),
          tx,
        );
        return { id: reported.event_id, status: 'blocked' as const };
      }
      if (frozen) {
        await this.suppressed(tx, reported, 'frozen', [reported.event_id]);
        return { id: reported.event_id, status: 'blocked' as const };
      }
      const fingerprint = sha256Hex(
        JSON.stringify([input.stage, input.summary, input.detail ?? '', input.artifact ?? '']),
      );
      const { decision, state: next } = decide(
        state,
        {
          ...input,
          ...gate.content,
          fingerprint,
          event_id: reported.event_id,
          ...(ctx.turn_id ? { turn_id: ctx.turn_id } : {}),
        },
        this.cfg,
        now,
      );
      await this.save(tx, scope, { ...next, ctx: scopeCtx }, now);
      if (decision.status === 'queued') return { id: reported.event_id, status: 'queued' as const };
      if (decision.status !== 'sent') {
        await this.suppressed(tx, reported, SUPPRESS_REASON[decision.status](decision), [reported.event_id]);
        return { id: reported.event_id, status: decision.status };
      }
      if (decision.superseded) {
        await this.suppressed(tx, reported, 'superseded', decision.superseded.event_ids);
      }
      const draft = progressDraft(input, gate.content, scopeCtx, {
        locale: this.cfg.locale,
        mention: decision.mention,
      });
      const reply = replyTarget(this.s, this.cfg, task, input.stage, now);
      const out = await this.dispatch(tx, draft, reported, decision.lane, scopeCtx.owner, {}, reply);
      return { id: reported.event_id, status: statusOf(out) };
    });
    if (ctx.task_id) await this.s.tasks?.touch(ctx.task_id).catch(() => {});
    return result;
  }

  /**
   * Routes a message and queues one delivery per channel, in `tx`. The `agent.notification.sent`
   * event records what was rendered and where it goes; its id is every delivery's idempotency key.
   */
  async dispatch(
    tx: Db,
    draft: Draft,
    cause: Envelope,
    lane: 'normal' | 'high',
    owner: string,
    /** Extra audit fields for the sent event (e.g. `reminder: true`). */
    extra: Record<string, unknown> = {},
    /** A resumable task's session: each channel's message gets its own signed "Reply" link to it. */
    reply?: ReplyTarget,
    /**
     * Channels this message must not go to (one whose credential was just revoked). When the routes
     * leave no other, it goes to every other configured channel: the owner must hear of it somewhere.
     */
    avoid?: readonly string[],
  ): Promise<DispatchOutcome> {
    const routed = selectChannels(this.routes, {
      stage: draft.stage,
      severity: draft.severity,
      task: draft.task?.id ?? '',
      agent: draft.agent ?? '',
      owner,
      kind: draft.kind,
    }).filter((t) => this.channels.has(t.channel) && !avoid?.includes(t.channel));
    const targets =
      routed.length > 0 || !avoid
        ? routed
        : [...this.channels]
            .filter((c) => !avoid.includes(c))
            .sort()
            .map((channel) => ({ channel, fallback: [], fallback_after: 1 }));
    if (targets.length === 0) {
      const event = await this.suppressed(tx, cause, 'no_route', [cause.event_id], {
        stage: draft.stage,
        kind: draft.kind,
      });
      return { kind: 'no_route', event };
    }
    const destinations = targets.map((t) => t.channel);
    const external = destinations.filter((d) => this.cfg.external_channels.includes(d));
    const event = await this.s.emit(
      causedBy(cause, {
        type: 'agent.notification.sent',
        redacted_summary: {
          ...sentSummary(draft, lane),
          ...(draft.detail !== undefined ? { detail_chars: draft.detail.length } : {}),
          ...(draft.artifact !== undefined ? { artifact: draft.artifact } : {}),
          mention: draft.mention === true,
          destinations,
          ...(external.length ? { external } : {}),
          ...(draft.actions ? { approval_id: draft.actions.approvalId } : {}),
          // What a reply resumes (never a token): the replies module maps chat message ids to it.
          ...(reply ? { reply } : {}),
          ...extra,
        },
      }),
      tx,
    );
    const message: Message = { ...draft, eventId: event.event_id };
    const deliveries = this.s.deliveries;
    if (!deliveries) {
      await this.suppressed(tx, event, 'no_delivery_engine', [cause.event_id], { destinations });
      return { kind: 'no_engine', destinations, event };
    }
    // Sent by this process right after the commit when the engine can admit it now (no claim first).
    const enqueue = deliveries.enqueueNow ?? deliveries.enqueue;
    for (const t of targets) {
      const own = await this.templated(tx, event, t.channel, draft);
      if (!own) continue;
      const base: Message = own === draft ? message : { ...own, eventId: event.event_id };
      const msg: Message = reply ? { ...base, reply: { url: replyLink(this.s, reply, t.channel) } } : base;
      const shown = external.includes(t.channel) ? redactForExternal(msg, this.cfg.aliases) : msg;
      const { id } = await enqueue(tx, {
        eventId: event.event_id,
        destination: t.channel,
        message: shown,
        priority: lane,
      });
      const fallback = t.fallback.filter((f) => this.channels.has(f) && f !== t.channel);
      if (fallback.length > 0) {
        await tx.query(
          q.insertFallback(
            {
              delivery_id: id,
              sent_event_id: event.event_id,
              destination: t.channel,
              fallback: JSON.stringify(fallback),
              after_failures: t.fallback_after,
              lane,
              message: JSON.stringify(draft),
            },
            this.s.now(),
          ),
        );
      }
    }
    return { kind: 'enqueued', destinations, event };
  }

  /**
   * The channel's own template, if the user set one, rendered and gated. A render failure falls back to
   * the built-in message (and says so in the log); a secret in the rendered text is blocked (or masked,
   * per `notify.secrets`) like a secret in a report. `undefined`: nothing goes to this channel.
   */
  private async templated(tx: Db, sent: Envelope, channel: string, draft: Draft): Promise<Draft | undefined> {
    if (this.templates.size === 0) return draft;
    const type = this.s.config.channels[channel]?.type;
    const r = await applyTemplate(this.engine, this.templates, { name: channel, type }, draft, this.cfg);
    if (r.kind === 'builtin' || r.kind === 'templated') return r.draft;
    if (r.kind === 'failed') {
      await this.suppressed(tx, sent, 'template_failed', [sent.event_id], {
        destination: channel,
        template: `notify.templates.${r.key}.${r.field}`,
        error: r.message,
        fallback: 'builtin',
      });
      return r.draft;
    }
    await this.s.emit(
      causedBy(sent, {
        type: 'agent.notification.blocked',
        redacted_summary: {
          reason: 'secret',
          secrets: r.secrets,
          destination: channel,
          template: `notify.templates.${r.key}`,
        },
      }),
      tx,
    );
    return undefined;
  }

  /**
   * A failed attempt of a delivery whose route names fallback channels: once it has failed
   * `fallback_after` times (or is dead), the same message goes to the fallback channels, once.
   */
  async onDeliveryFailure(event: Envelope): Promise<void> {
    const deliveryId = event.subject.resource_ref;
    const deliveries = this.s.deliveries;
    if (!deliveryId || !deliveries) return;
    const attempt = Number(event.redacted_summary.attempt ?? 0);
    const dead = event.type !== 'integration.delivery.failed';
    await this.s.db.tx(async (tx) => {
      const [row] = await tx.query<{ after_failures: number; fired_at: number | null }>(
        q.getFallback(deliveryId),
      );
      if (!row || row.fired_at !== null) return;
      if (!dead && attempt < Number(row.after_failures)) return;
      const [fired] = await tx.query<q.FallbackRow>(q.fireFallback(deliveryId, this.s.now()));
      if (!fired) return;
      const draft = JSON.parse(fired.message) as Draft;
      const fallback = JSON.parse(fired.fallback) as string[];
      const lane = fired.lane === 'high' ? 'high' : 'normal';
      const sent = await this.s.emit(
        causedBy(event, {
          type: 'agent.notification.sent',
          redacted_summary: {
            ...sentSummary(draft, lane),
            destinations: fallback,
            fallback_for: {
              destination: fired.destination,
              delivery_id: deliveryId,
              sent_event_id: fired.sent_event_id,
            },
          },
        }),
        tx,
      );
      for (const destination of fallback) {
        const shown: Message = { ...draft, eventId: sent.event_id };
        const message = this.cfg.external_channels.includes(destination)
          ? redactForExternal(shown, this.cfg.aliases)
          : shown;
        await deliveries.enqueue(tx, { eventId: sent.event_id, destination, message, priority: lane });
      }
    });
  }

  /**
   * A task resumed by a person (a reply, `POST /v1/tasks/{id}/resume`) starts a new run: its `done` is
   * news again, so the "done already sent" mark of the task's scope is cleared. An approval decision
   * (`via: approval`) continues the same run and keeps it.
   */
  async onResumed(event: Envelope): Promise<void> {
    const scope = event.execution.task_id;
    if (!scope || event.redacted_summary.via === 'approval') return;
    await this.s.db.tx(async (tx) => {
      const now = this.s.now();
      const state = await this.lock(tx, scope, now);
      if (!state.done_sent) return;
      await this.save(tx, scope, { ...state, done_sent: false }, now);
    });
  }

  /** Sends every digest whose merge window has closed; returns how many were sent. */
  async flushDue(limit = 50): Promise<number> {
    const now = this.s.now();
    const due = await this.s.db.query<{ scope: string }>(q.dueScopes(now, limit));
    let sent = 0;
    for (const { scope } of due) {
      sent += await this.s.db.tx(async (tx) => {
        const state = await this.lock(tx, scope, now);
        const { decision, state: next } = flush(state, this.cfg, now);
        await this.save(tx, scope, next, now);
        if (decision.kind !== 'send' && decision.kind !== 'flood') return 0;
        const ctx = state.ctx ?? { task_id: null, agent: '', owner: '', correlation_id: null };
        const latest = decision.kind === 'send' ? decision.digest.event_id : decision.flood.event_id;
        const cause = await this.eventById(tx, latest);
        if (!cause) return 0;
        if (decision.kind === 'flood') {
          const f = decision.flood;
          await this.dispatch(tx, floodDraft(f, ctx, this.cfg.locale), cause, 'high', ctx.owner, {
            flood: { repeats: f.count + 1, reports: f.event_ids },
          });
          return 1;
        }
        await this.dispatch(
          tx,
          digestDraft(decision.digest, ctx, this.cfg.locale),
          cause,
          'normal',
          ctx.owner,
        );
        return 1;
      });
    }
    return sent;
  }

  /** A freeze of the reporting key (or the whole tenant) stops its notifications; no gate, no freeze. */
  private async frozen(ctx: ReportContext): Promise<boolean> {
    const gate = this.s.gate;
    if (!gate?.frozen) return false;
    return gate.frozen(ctx.key ?? ctx.principal.name);
  }

  private async lock(tx: Db, scope: string, now: number): Promise<StoredState> {
    // PostgreSQL needs a row for FOR UPDATE to lock; SQLite's BEGIN IMMEDIATE already holds the writer
    // lock, and `save` upserts.
    if (tx.dialect === 'postgres') await tx.query(q.ensureState(scope, now));
    const [row] = await tx.query<q.StateRow>(q.lockState(tx.dialect, scope));
    return row ? (JSON.parse(row.state) as StoredState) : { ...EMPTY_STATE };
  }

  private async save(tx: Db, scope: string, state: StoredState, now: number): Promise<void> {
    await tx.query(q.saveState(scope, JSON.stringify(state), dueAt(state), now));
  }

  private async eventById(tx: Db, id: string): Promise<Envelope | undefined> {
    return (await this.s.log.get(id, tx))?.envelope;
  }

  private reportedEvent(
    input: ProgressInput,
    /** `input` with its secrets masked: the log is kept for years and read by more people than the channel. */
    shown: ContentInput,
    ctx: ReportContext,
    who: ScopeContext,
    blocked: boolean,
  ): EnvelopeInput {
    return {
      type: 'agent.progress.reported',
      actor: { agent_id: ctx.principal.name, user_id: who.owner || null },
      execution: { task_id: ctx.task_id, session_id: ctx.session_id ?? null, turn_id: ctx.turn_id ?? null },
      ...(who.correlation_id ? { correlation_id: who.correlation_id } : {}),
      redacted_summary: {
        stage: input.stage,
        severity: input.severity,
        summary: shown.summary,
        ...(shown.detail !== undefined ? { detail: prefix(shown.detail, 500) } : {}),
        ...(shown.artifact !== undefined ? { artifact: shown.artifact } : {}),
        ...(blocked ? { blocked: true } : {}),
      },
    };
  }

  private async suppressed(
    tx: Db,
    cause: Envelope,
    reason: SuppressReason,
    reports: string[],
    extra: Record<string, unknown> = {},
  ): Promise<Envelope> {
    return this.s.emit(
      causedBy(cause, {
        type: 'agent.notification.suppressed',
        redacted_summary: { reason, reports, ...extra },
      }),
      tx,
    );
  }
}

/** Stages after which a person may want to tell a headless agent what to do next. */
const REPLY_STAGES: readonly Stage[] = ['done', 'failed', 'blocked'];

/**
 * A reply target for a message about `task`: only for a headless task whose session and runtime are
 * known (hooks told us), at a stage where the agent has stopped or waits, with a public URL and a TTL.
 * Whether it can really resume is decided when the reply comes (planResume).
 */
function replyTarget(
  s: NotifyDeps,
  cfg: NotifyConfig,
  task: TaskView | undefined,
  stage: Stage,
  now: number,
): ReplyTarget | undefined {
  if (!task?.session_id || !task.runtime || !REPLY_STAGES.includes(stage)) return undefined;
  if (cfg.reply_ttl_seconds === 0 || !s.config.server.public_url) return undefined;
  return { task_id: task.id, session_id: task.session_id, expires_at: now + cfg.reply_ttl_seconds * 1000 };
}

function statusOf(out: DispatchOutcome): ProgressStatus {
  if (out.kind === 'enqueued') return 'sent';
  if (out.kind === 'no_engine') return 'queued';
  return 'blocked';
}

/** What every `agent.notification.sent` says of the message: its shape, never its detail. */
function sentSummary(draft: Draft, lane: 'normal' | 'high') {
  return {
    kind: draft.kind,
    stage: draft.stage,
    severity: draft.severity,
    lane,
    title: draft.title,
    summary: draft.summary,
  };
}
