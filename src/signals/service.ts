import { causedBy, type Envelope, readJsonText } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import type { ProgressResult, Reporter } from '../notify/port.js';
import type { SignalsDeps } from './module.js';
import { readAway, TENANT_OWNER } from './away.js';
import { NOTIFICATION_FOLD_GRACE_MS } from './phone.js';
import { kindEnabled, type SignalsConfig } from './config.js';
import { branchOf, projectOf, reportFor } from './context.js';
import { ACTIVITY_TYPES, type Signal, toSignal } from './mapping.js';
import * as q from './sql.js';
import { prefix } from '../text/index.js';

/** Subscriber names key the inbox: renaming one makes it see old events again. */
export const SUBSCRIBER = 'signals';

/** How stale a session's activity clock may get before a tool call writes it again. */
export const ACTIVITY_WRITE_MS = 5_000;

/** A phone approval nobody answered in time: the person hears that the prompt waits at the desk. */
export const APPROVAL_EXPIRED = 'agent.approval.expired';

export type SignalOutcome =
  | { kind: 'ignored' }
  | { kind: 'disabled'; signal: Signal['kind'] }
  | { kind: 'folded'; signal: Signal['kind'] }
  | { kind: 'recorded'; signal: Signal['kind'] }
  | { kind: 'reported'; signal: Signal['kind']; result: ProgressResult };

/**
 * Turns runtime envelopes into governed notifications. Activity envelopes only move the session's
 * clock; signal envelopes are mapped, filtered by config and away mode, folded (idle), and reported.
 */
export class SignalRelay {
  constructor(
    private readonly s: SignalsDeps,
    private readonly cfg: SignalsConfig,
    private readonly reporter: () => Reporter | undefined,
  ) {}

  /**
   * One event, as the relay hands it over. The relay keeps the inbox for this subscriber (it skips an
   * event already processed and marks it after this returns), so a crash in between re-runs it, and
   * notify's own audit shows both.
   */
  async handle(event: Envelope): Promise<SignalOutcome> {
    try {
      return await this.process(event);
    } catch (err) {
      // A refusal (a task notify does not know, say) will not change on retry; a store error will.
      if (!(err instanceof AppError)) throw err;
      this.s.logger.warn({ code: err.code, event_id: event.event_id }, 'signals: notify refused the signal');
      return { kind: 'ignored' };
    }
  }

  private async process(event: Envelope): Promise<SignalOutcome> {
    const now = this.s.now();
    const runtime = event.runtime?.kind ?? '';
    const sessionKey = `${runtime}:${event.execution.session_id ?? ''}`;
    const [session] = await this.s.db.query<q.SessionRow>(q.getSession(sessionKey));
    const stored = storedState(session);
    if (ACTIVITY_TYPES.has(event.type)) {
      const phase = trackedPhase(event, event.type === 'agent.session.started' ? 'idle' : 'working');
      // A busy session calls a tool every few seconds: its clock is written at most every
      // ACTIVITY_WRITE_MS (the waiting time a person reads is in seconds or minutes), always when an
      // idle streak ends, the phase changes or a stall notice is out.
      const fresh =
        session !== undefined &&
        !stored.idle_open &&
        stored.phase === phase &&
        stored.stalled_at === null &&
        stored.last_activity_at !== null &&
        now - stored.last_activity_at < ACTIVITY_WRITE_MS;
      if (!fresh) await this.save(sessionKey, active(stored, event, phase, now), now);
      if (event.type === 'agent.prompt.submitted') await this.s.db.query(q.touchInput(TENANT_OWNER, now));
      return { kind: 'ignored' };
    }
    if (event.type === APPROVAL_EXPIRED) return this.expired(event);
    const raw = await this.payload(event);
    const signal = toSignal(event.type, String(event.redacted_summary.event ?? ''), raw);
    if (!signal) return { kind: 'ignored' };
    // A turn that ended (either way) is activity: waiting is counted from here.
    const ended = signal.kind === 'turn_done' || signal.kind === 'turn_failed';
    const lastActivity = stored.last_activity_at ?? undefined;
    if (ended || signal.kind === 'session_ended') {
      await this.save(sessionKey, active(stored, event, 'idle', now), now);
    } else if (signal.needsPerson && stored.phase === 'working') {
      // The runtime waits for a person (a permission dialog, a question): quiet is not a stall.
      await this.save(sessionKey, { ...stored, phase: 'waiting' }, now);
    }
    if (!this.cfg.enabled || !kindEnabled(this.cfg, runtime, signal.kind)) {
      return { kind: 'disabled', signal: signal.kind };
    }
    const task = event.execution.task_id ? await this.s.tasks?.get(event.execution.task_id) : undefined;
    const owner = task?.owner ?? TENANT_OWNER;

    if (signal.kind === 'idle_prompt' && session && Number(session.idle_open) === 1) {
      const folded = stored.idle_folded + 1;
      await this.save(sessionKey, { ...stored, phase: 'waiting', idle_open: true, idle_folded: folded }, now);
      await this.suppressed(event, 'idle_folded', signal, { folded });
      return { kind: 'folded', signal: signal.kind };
    }
    if (signal.kind === 'permission_prompt') {
      // The same prompt the phone already shows as an approval (the runtime raises its notification
      // when its own dialog appears): telling it twice is noise.
      const since = now - (this.cfg.permissions.wait_seconds * 1000 + NOTIFICATION_FOLD_GRACE_MS);
      const [onPhone] = await this.s.db.query<q.PhoneApprovalRow>(q.recentPhoneApproval(sessionKey, since));
      if (onPhone) {
        await this.suppressed(event, 'approval_on_phone', signal, { approval_id: onPhone.approval_id });
        return { kind: 'folded', signal: signal.kind };
      }
    }
    const away =
      signal.needsPerson || signal.kind === 'turn_done'
        ? await readAway(this.s.db, owner, this.cfg, now)
        : undefined;
    if (signal.needsPerson && !away?.effective) {
      await this.suppressed(event, 'owner_not_away', signal);
      return { kind: 'recorded', signal: signal.kind };
    }
    // Away, every finished turn is news: notify folds by turn (a runtime that reports one turn twice
    // is told once). At the desk the scope's first `done` goes out and later ones are only recorded.
    const turnId =
      signal.kind === 'turn_done' && away?.effective
        ? (event.execution.turn_id ?? event.event_id)
        : undefined;
    const reporter = this.reporter();
    if (!reporter) {
      this.s.logger.warn({ event_id: event.event_id }, 'signals: the notify module is not running');
      return { kind: 'ignored' };
    }
    const cwd = typeof raw.cwd === 'string' ? raw.cwd : undefined;
    const project = projectOf(cwd) ?? strOf(event.redacted_summary.cwd);
    const branch = branchOf(raw, cwd);
    const sessionId = event.execution.session_id ?? undefined;
    const input = reportFor(
      signal,
      {
        ...(project ? { project } : {}),
        ...(branch ? { branch } : {}),
        ...(sessionId ? { session: sessionId } : {}),
        ...(lastActivity !== undefined ? { waitingMs: now - lastActivity } : {}),
      },
      this.cfg.summary_max_chars,
    );
    const agent = event.actor.agent_id ?? 'agent';
    const result = await reporter.report(input, {
      // Without a task, each session is its own governance scope: one session's `done` must not
      // silence the next session's.
      principal: {
        name: task ? agent : [agent, project, sessionId && prefix(sessionId, 8)].filter(Boolean).join(':'),
        role: 'agent',
        ...(task ? { task_id: task.id } : {}),
      },
      task_id: task ? task.id : null,
      ...(sessionId ? { session_id: sessionId } : {}),
      ...(turnId ? { turn_id: turnId } : {}),
      key: agent,
    });
    if (signal.kind === 'idle_prompt') {
      await this.save(sessionKey, { ...stored, phase: 'waiting', idle_open: true, idle_folded: 0 }, now);
    }
    return { kind: 'reported', signal: signal.kind, result };
  }

  private async save(sessionKey: string, state: q.SessionState, now: number): Promise<void> {
    await this.s.db.query(q.saveSession(sessionKey, state, now));
  }

  /**
   * A permission prompt taken to the phone expired unanswered: the hook has already let the runtime's
   * own dialog appear, and the person is told so (other approvals expire silently, as before).
   */
  private async expired(event: Envelope): Promise<SignalOutcome> {
    const id = strOf(event.redacted_summary.approval_id);
    if (!id) return { kind: 'ignored' };
    const [row] = await this.s.db.query<q.PhoneApprovalRow>(q.getPhoneApproval(id));
    if (!row) return { kind: 'ignored' };
    const reporter = this.reporter();
    if (!reporter) return { kind: 'ignored' };
    const runtime = row.session_key.slice(0, row.session_key.indexOf(':'));
    const sessionId = event.execution.session_id ?? undefined;
    const action = strOf(event.redacted_summary.action);
    const taskId = event.execution.task_id;
    const agent = event.actor.agent_id ?? 'agent';
    const result = await reporter.report(
      {
        stage: 'blocked',
        severity: 'warn',
        summary: 'No answer in time: the permission prompt is waiting at the desk',
        detail: [
          action ? `asked: ${action}` : undefined,
          `approval: ${id} expired`,
          runtime ? `runtime: ${runtime}` : undefined,
          sessionId ? `session: ${sessionId}` : undefined,
        ]
          .filter(Boolean)
          .join('\n'),
      },
      {
        principal: {
          name: taskId ? agent : [agent, sessionId && prefix(sessionId, 8)].filter(Boolean).join(':'),
          role: 'agent',
          ...(taskId ? { task_id: taskId } : {}),
        },
        task_id: taskId ?? null,
        ...(sessionId ? { session_id: sessionId } : {}),
      },
    );
    return { kind: 'reported', signal: 'permission_request', result };
  }

  /** The raw hook body from the vault; an expired or missing payload leaves only the envelope. */
  private async payload(event: Envelope): Promise<Record<string, unknown>> {
    if (!event.payload_ref) return {};
    try {
      const bytes = await this.s.vault.get(event.payload_ref);
      const read = bytes ? readJsonText(bytes.toString('utf8')) : { ok: true as const, value: {} };
      const value = read.ok ? read.value : {};
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : {};
    } catch (err) {
      this.s.logger.warn({ err, event_id: event.event_id }, 'signals: could not read the hook payload');
      return {};
    }
  }

  private async suppressed(
    cause: Envelope,
    reason: 'idle_folded' | 'owner_not_away' | 'approval_on_phone',
    signal: Signal,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await this.s.emit(
      causedBy(cause, {
        type: 'agent.notification.suppressed',
        redacted_summary: { reason, signal: signal.kind, stage: signal.stage, reports: [], ...extra },
      }),
    );
  }
}

function strOf(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** A session's stored state, or a new session's (idle, never active). */
function storedState(row: q.SessionRow | undefined): q.SessionState {
  return {
    last_activity_at: row?.last_activity_at != null ? Number(row.last_activity_at) : null,
    idle_open: Number(row?.idle_open ?? 0) === 1,
    idle_folded: Number(row?.idle_folded ?? 0),
    phase: row?.phase ?? 'idle',
    stalled_at: row?.stalled_at != null ? Number(row.stalled_at) : null,
    agent: row?.agent ?? null,
    project: row?.project ?? null,
  };
}

/**
 * The phase the stall watch tracks. A launched task's session is watched by the tasks supervisor, and
 * a session without an id cannot be told apart from others: neither is ever `working` here.
 */
function trackedPhase(event: Envelope, phase: q.Phase): q.Phase {
  return event.execution.task_id || !event.execution.session_id ? 'idle' : phase;
}

/** After activity: the clock moves, an idle streak ends, a stall notice is cleared. */
function active(stored: q.SessionState, event: Envelope, phase: q.Phase, now: number): q.SessionState {
  return {
    last_activity_at: now,
    idle_open: false,
    idle_folded: 0,
    phase: trackedPhase(event, phase),
    stalled_at: null,
    agent: event.actor.agent_id ?? stored.agent,
    project: strOf(event.redacted_summary.cwd) ?? stored.project,
  };
}
