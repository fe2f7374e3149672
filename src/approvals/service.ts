import type { ClusterService } from '../cluster/port.js';
import { RESYNC } from '../cluster/port.js';
import { maskSecrets } from '../scan/secrets.js';
import { causedBy, type EnvelopeInput, newId } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { planDigest } from '../envelope/plan.js';
import type { Principal, Services } from '../kernel/module.js';
import type { ApprovalRequest, ApprovalService, DecisionVia, ExpiringApproval, PlanRecheck } from './port.js';
import { one, type Sql } from '../store/port.js';
import { DEFAULT_APPROVAL_TTL_SECONDS, WAIT_POLL_MS } from './config.js';
import { type ApprovalLinks, linksFor, type ParsedToken, verifyLink } from './links.js';
import { recheckPlan } from './recheck.js';
import * as q from './sql.js';
import { type ApprovalRecord, effectiveState, toRecord } from './view.js';
import { truncate } from '../text/index.js';

export interface ApprovalsOptions {
  ttlMs?: number;
  pollMs?: number;
  /** HMAC key for signed links (derived from the vault key by the module). */
  linkKey: Uint8Array;
}

/** The request of the port, plus the key names allowed to decide (none: any approver or admin). */
export type ApprovalRequestWithApprovers = ApprovalRequest & { approvers?: string[] };

/**
 * How a decision arrived: with a bearer key (the API, the CLI), a console session (signed in with a
 * key), or through a signed link (the token is the credential: only link-routes.ts passes `link`).
 */
export type DecisionChannel = DecisionVia | 'link';

/** Redacted summaries keep agent-written text short: the full reason is in the approvals row. */
const SUMMARY_TEXT_MAX = 200;

/** What the log may keep of agent-written text: secrets masked (the log is no secret store), then capped. */
function clip(text: string): string {
  const masked = maskSecrets(text);
  return truncate(masked, SUMMARY_TEXT_MAX);
}

/** The cluster broadcast topic of approval state changes; the payload is the approval id. */
export const APPROVALS_TOPIC = 'approvals';

/**
 * Approvals over the store. Every state change is one conditional UPDATE plus its event in the same
 * transaction; in-process waiters are woken after commit, waiters on other replicas by the cluster's
 * broadcast (PostgreSQL NOTIFY, sent at the same commit), and the poll remains as the fallback.
 */
export class Approvals implements ApprovalService {
  private readonly waiters = new Map<string, Set<() => void>>();
  readonly ttlMs: number;
  private readonly pollMs: number;
  private recheck: PlanRecheck | undefined;
  private bus: ClusterService | undefined;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly s: Services,
    private readonly opts: ApprovalsOptions,
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_APPROVAL_TTL_SECONDS * 1000;
    this.pollMs = opts.pollMs ?? WAIT_POLL_MS;
  }

  useRecheck(check: PlanRecheck | undefined): void {
    this.recheck = check;
  }

  /** Wakes this replica's waiters on a broadcast from any replica, and broadcasts this one's changes. */
  useBus(cluster: ClusterService | undefined): void {
    this.unlisten?.();
    this.unlisten = undefined;
    this.bus = cluster;
    if (!cluster) return;
    this.unlisten = cluster.listen(APPROVALS_TOPIC, (id) => {
      if (id === RESYNC) for (const waiting of [...this.waiters.keys()]) this.wake(waiting);
      else this.wake(id);
    });
  }

  async request(asked: ApprovalRequestWithApprovers): Promise<ApprovalRecord> {
    // The agent wrote `action` and `reason`; they are shown on phones and kept in the log, so a secret
    // in them is masked before either sees it. The plan (what the digest covers) is kept as asked.
    const req = { ...asked, action: maskSecrets(asked.action), reason: maskSecrets(asked.reason) };
    const now = this.s.now();
    const ttl = req.ttl_ms ?? this.ttlMs;
    if (!Number.isFinite(ttl) || ttl <= 0)
      throw new AppError('bad_request', 'ttl_ms must be a positive number');
    const id = newId('approval', now);
    const digest = planDigest(req.plan);
    // A task-bound key names the task; otherwise the request, then the event that caused it.
    const taskId = req.requested_by.task_id ?? req.task_id ?? req.cause?.execution.task_id ?? null;
    const sessionId = req.session_id ?? req.cause?.execution.session_id ?? null;
    const expiresAt = now + ttl;
    const plan = {
      tool: req.plan.tool,
      input: req.plan.input,
      ...(req.plan.action !== undefined ? { action: req.plan.action } : {}),
      ...(req.plan.resource !== undefined ? { resource: req.plan.resource } : {}),
    };
    const input: EnvelopeInput = {
      type: 'agent.approval.requested',
      actor: { agent_id: req.requested_by.name },
      execution: { task_id: taskId, session_id: sessionId },
      subject: {
        tool: plan.tool,
        action: clip(plan.action ?? req.action),
        resource_ref: plan.resource ?? null,
      },
      payload_digest: digest,
      redacted_summary: {
        approval_id: id,
        action: clip(req.action),
        reason: clip(req.reason),
        plan_digest: digest,
        expires_at: new Date(expiresAt).toISOString(),
        ...(req.approvers?.length ? { approvers: req.approvers } : {}),
      },
    };
    await this.s.db.tx(async (tx) => {
      const env = await this.s.emit(req.cause ? causedBy(req.cause, input) : input, tx);
      await tx.query(
        q.insertApproval({
          id,
          action: req.action,
          reason: req.reason,
          plan: JSON.stringify(plan),
          plan_digest: digest,
          task_id: taskId,
          session_id: sessionId,
          requested_by: req.requested_by.name,
          approvers: req.approvers?.length ? JSON.stringify(req.approvers) : null,
          correlation_id: env.correlation_id,
          request_event_id: env.event_id,
          created_at: now,
          expires_at: expiresAt,
        }),
      );
    });
    return (await this.get(id))!;
  }

  async row(id: string): Promise<q.ApprovalRow | undefined> {
    return one<q.ApprovalRow>(this.s.db, q.selectApproval(id));
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const row = await this.row(id);
    return row ? toRecord(row, this.s.now()) : undefined;
  }

  async list(f: {
    state?: ApprovalRecord['state'];
    requestedBy?: string;
    limit: number;
  }): Promise<ApprovalRecord[]> {
    const now = this.s.now();
    const rows = await this.s.db.query<q.ApprovalRow>(q.listApprovals({ ...f, now }));
    return rows.map((r) => toRecord(r, now));
  }

  async expiring(
    after: number,
    until: number,
    limit: number,
    minLifetimeMs = 0,
  ): Promise<ExpiringApproval[]> {
    const rows = await this.s.db.query<ExpiringApproval>(
      q.selectExpiring(after, until, limit, minLifetimeMs),
    );
    return rows.map((r) => ({ ...r, expires_at: Number(r.expires_at) }));
  }

  async wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalRecord | undefined> {
    const deadline = performance.now() + Math.max(0, timeoutMs);
    for (;;) {
      const view = await this.get(id);
      if (view?.state !== 'pending' || signal?.aborted) return view;
      const left = deadline - performance.now();
      if (left <= 0) return view;
      await this.sleep(id, Math.min(this.pollMs, left), signal);
    }
  }

  private sleep(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(id) ?? new Set<() => void>();
      this.waiters.set(id, set);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  private wake(id: string): void {
    for (const fn of [...(this.waiters.get(id) ?? [])]) fn();
  }

  decide(
    id: string,
    decision: 'approve' | 'reject',
    by: Principal,
    comment?: string,
    via: DecisionVia = 'key',
  ): Promise<ApprovalRecord> {
    // Only the two key-bound channels: a caller of the port can never claim a link's exemption.
    return this.decideVia(id, decision, by, via === 'console' ? 'console' : 'key', comment);
  }

  /**
   * The one way an approval is decided. Checks run first for clear errors; the conditional UPDATE
   * then settles races: of two concurrent decisions only one matches `state = 'pending'`.
   */
  async decideVia(
    id: string,
    decision: 'approve' | 'reject',
    by: Principal,
    via: DecisionChannel,
    comment?: string,
  ): Promise<ApprovalRecord> {
    if (by.role === 'agent') throw new AppError('self_approval');
    const row = await this.row(id);
    if (!row) throw new AppError('not_found', `no approval ${id}`);
    const approvers = row.approvers ? (JSON.parse(row.approvers) as string[]) : [];
    // Admins may always decide (break-glass); a link was issued for this approval by the gateway itself.
    if (via !== 'link' && by.role !== 'admin' && approvers.length > 0 && !approvers.includes(by.name)) {
      throw new AppError(
        'forbidden',
        `this approval may be decided by ${approvers.join(', ')} (or an admin)`,
      );
    }
    this.assertPending(row);
    const asker: Principal = { name: row.requested_by, role: 'agent' };
    if (row.task_id) asker.task_id = row.task_id;
    const checked =
      decision === 'approve'
        ? await recheckPlan(this.recheck, JSON.parse(row.plan), row.plan_digest, asker, {
            task_id: row.task_id,
            session_id: row.session_id,
          })
        : undefined;
    if (checked?.error) this.s.logger.error({ err: checked.error, approval_id: id }, 'gate re-check failed');
    const state = decision === 'approve' ? 'approved' : 'rejected';
    const updated = await this.s.db.tx(async (tx) => {
      const now = this.s.now();
      const [won] = await tx.query<q.ApprovalRow>(
        q.decideApproval({
          id,
          state,
          now,
          by: by.name,
          comment: comment ?? null,
          capability: checked?.capability ? JSON.stringify(checked.capability) : null,
          recheck: checked ? JSON.stringify(checked.recheck) : null,
        }),
      );
      if (!won) {
        const current = await one<q.ApprovalRow>(tx, q.selectApproval(id));
        this.assertPending(current!, now);
        throw new AppError('already_decided');
      }
      await this.s.emit(
        this.followUp(
          won,
          state === 'approved' ? 'agent.approval.approved' : 'agent.approval.rejected',
          {
            decision: state,
            decided_by: by.name,
            via,
            ...(comment ? { comment: clip(comment) } : {}),
            ...(checked
              ? {
                  recheck: checked.recheck,
                  ...(checked.capability ? { capability_id: checked.capability.id } : {}),
                }
              : {}),
          },
          by.name,
        ),
        tx,
      );
      await this.bus?.broadcast(tx, APPROVALS_TOPIC, id);
      return won;
    });
    this.wake(id);
    return toRecord(updated, this.s.now());
  }

  private assertPending(row: q.ApprovalRow, now = this.s.now()): void {
    const state = effectiveState(row, now);
    if (state === 'expired')
      throw new AppError(
        'expired',
        `approval ${row.id} expired at ${new Date(Number(row.expires_at)).toISOString()}`,
      );
    if (state !== 'pending') throw new AppError('already_decided', `approval ${row.id} was already ${state}`);
  }

  /** An event about an approval after its request: same correlation, caused by the request. */
  private followUp(
    row: q.ApprovalRow,
    type: 'agent.approval.approved' | 'agent.approval.rejected' | 'agent.approval.expired',
    summary: Record<string, unknown>,
    userId: string | null,
  ): EnvelopeInput {
    const plan = JSON.parse(row.plan) as { tool: string; action?: string; resource?: string };
    return {
      type,
      correlation_id: row.correlation_id,
      causation_id: row.request_event_id,
      actor: { user_id: userId, agent_id: row.requested_by },
      execution: { task_id: row.task_id, session_id: row.session_id },
      subject: {
        tool: plan.tool,
        action: clip(plan.action ?? row.action),
        resource_ref: plan.resource ?? null,
      },
      payload_digest: row.plan_digest,
      redacted_summary: {
        approval_id: row.id,
        action: clip(row.action),
        plan_digest: row.plan_digest,
        ...summary,
      },
    };
  }

  /** Marks past-due pending approvals `expired`, each with its event; returns how many. */
  async expireDue(limit = 100): Promise<number> {
    const due = await this.s.db.query<{ id: string }>(q.selectDue(this.s.now(), limit));
    let count = 0;
    for (const { id } of due) {
      if (await this.expire(q.expireApproval(id, this.s.now()), id, {})) count += 1;
    }
    return count;
  }

  /**
   * Ends a pending approval before its time (`reason` says why, e.g. `gateway_stopping`): its event is
   * `agent.approval.expired`, so nothing waits on it. False when it was no longer pending.
   */
  withdraw(id: string, reason: string): Promise<boolean> {
    return this.expire(q.withdrawApproval(id, this.s.now()), id, { reason });
  }

  private async expire(update: Sql, id: string, summary: Record<string, unknown>): Promise<boolean> {
    const expired = await this.s.db.tx(async (tx) => {
      const [row] = await tx.query<q.ApprovalRow>(update);
      if (!row) return false; // decided, or expired by another replica, in between
      await this.s.emit(
        this.followUp(
          row,
          'agent.approval.expired',
          { expires_at: new Date(Number(row.expires_at)).toISOString(), ...summary },
          null,
        ),
        tx,
      );
      await this.bus?.broadcast(tx, APPROVALS_TOPIC, id);
      return true;
    });
    if (expired) this.wake(id);
    return expired;
  }

  /** Signed links for a phone: a confirmation page and POST targets; see links.ts. */
  async approvalLinks(id: string, baseUrl: string): Promise<ApprovalLinks> {
    const row = await this.row(id);
    if (!row) throw new AppError('not_found', `no approval ${id}`);
    return linksFor(this.opts.linkKey, { ...row, expires_at: Number(row.expires_at) }, baseUrl);
  }

  /** The approval a link token names, when the token is genuine; undefined for anything forged or tampered. */
  async rowForToken(token: ParsedToken): Promise<q.ApprovalRow | undefined> {
    const row = await this.row(token.id);
    if (!row) return undefined;
    return verifyLink(this.opts.linkKey, token, { ...row, expires_at: Number(row.expires_at) })
      ? row
      : undefined;
  }
}
