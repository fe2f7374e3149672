import type { Envelope } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/module.js';
import type { RepliesDeps } from './module.js';
import * as q from './sql.js';

/** What a reply is about: a task's session, until a moment. Signed into a link or stored per chat message. */
export interface ReplyTarget {
  task_id: string;
  session_id: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

/** How a reply arrived, for the audit event and the `reply_uses` row (never the text). */
export interface ReplyVia {
  kind: 'link' | 'telegram' | 'slack';
  channel: string;
  by: Principal;
  /** Makes the reply count once: the link's nonce, or the chat update id. */
  use_id: string;
}

export type ReplyOutcome =
  | { kind: 'resumed'; task_id: string }
  /** The task cannot take the reply now; `reason` is one sentence for the person (planResume's). */
  | { kind: 'refused'; task_id: string; reason: string }
  | { kind: 'expired' }
  | { kind: 'used' };

/**
 * A reply from a phone resumes the task's session through `tasks.resume`: the text becomes the resume
 * message file (data, never argv). The reply's use is claimed first and released when the task does not
 * take it, so a link that met a running task still works once it stops, and two presses resume once.
 */
export class Replies {
  constructor(private readonly s: RepliesDeps) {}

  async resume(target: ReplyTarget, text: string, via: ReplyVia): Promise<ReplyOutcome> {
    const now = this.s.now();
    if (now >= target.expires_at) {
      await this.audit(target, via, text, { outcome: 'expired' });
      return { kind: 'expired' };
    }
    const tasks = this.s.tasks;
    if (!tasks) throw new AppError('not_ready', 'the tasks module is not running, so no task can be resumed');
    const [claimed] = await this.s.db.query<{ use_id: string }>(
      q.claimUse(via.use_id, target.task_id, via.kind, now),
    );
    if (!claimed) {
      await this.audit(target, via, text, { outcome: 'used' });
      return { kind: 'used' };
    }
    const refuse = async (reason: string): Promise<ReplyOutcome> => {
      await this.s.db.query(q.releaseUse(via.use_id));
      await this.audit(target, via, text, { outcome: 'refused', reason });
      return { kind: 'refused', task_id: target.task_id, reason };
    };
    try {
      const task = await tasks.get(target.task_id);
      if (!task) return await refuse(`task ${target.task_id} no longer exists`);
      if (task.session_id !== target.session_id)
        return await refuse(
          `task ${target.task_id} has moved on to another session since this message; reply to its latest message`,
        );
      await tasks.resume(target.task_id, text, via.by);
    } catch (err) {
      if (err instanceof AppError && (err.code === 'conflict' || err.code === 'not_found'))
        return refuse(err.message);
      await this.s.db.query(q.releaseUse(via.use_id)).catch(() => {});
      throw err;
    }
    await this.audit(target, via, text, { outcome: 'resumed' });
    return { kind: 'resumed', task_id: target.task_id };
  }

  /** Whether a link's nonce was already used (the GET page says so instead of showing the form). */
  async used(useId: string): Promise<boolean> {
    return (await this.s.db.query(q.selectUse(useId))).length > 0;
  }

  target(channel: string, messageId: string): Promise<q.TargetRow | undefined> {
    return this.s.db.query<q.TargetRow>(q.selectTarget(channel, messageId)).then((r) => r[0]);
  }

  /**
   * `integration.delivery.succeeded` with a provider message id, caused by a notification that carried
   * a reply target: remember (channel, message id) → target, so a chat reply to it can resume the task.
   */
  async onDelivered(event: Envelope, channelTypes: readonly string[]): Promise<void> {
    const s = event.redacted_summary;
    const providerId = typeof s.provider_id === 'string' ? s.provider_id : undefined;
    const destination = typeof s.destination === 'string' ? s.destination : undefined;
    if (!providerId || !destination || !event.causation_id) return;
    if (!channelTypes.includes(String(s.channel))) return;
    const stored = await this.s.log.get(event.causation_id);
    if (!stored) return;
    const sent = stored.envelope;
    const reply = sent.redacted_summary.reply as Partial<ReplyTarget> | undefined;
    if (
      sent.type !== 'agent.notification.sent' ||
      typeof reply?.task_id !== 'string' ||
      typeof reply.session_id !== 'string' ||
      typeof reply.expires_at !== 'number'
    )
      return;
    await this.s.db.query(
      q.insertTarget(
        {
          channel: destination,
          provider_message_id: providerId,
          task_id: reply.task_id,
          session_id: reply.session_id,
          expires_at: reply.expires_at,
        },
        this.s.now(),
      ),
    );
  }

  /** Forgets chat targets a day past their expiry. */
  async sweep(): Promise<void> {
    await this.s.db.query(q.deleteExpiredTargets(this.s.now() - 86_400_000));
  }

  /** The audit record: who, through which channel, what became of it, and the text's length only. */
  private async audit(
    target: ReplyTarget,
    via: ReplyVia,
    text: string,
    result: { outcome: 'resumed' | 'refused' | 'expired' | 'used'; reason?: string },
  ): Promise<void> {
    await this.s.emit({
      type: 'agent.reply.received',
      actor: { user_id: via.by.name },
      execution: { task_id: target.task_id, session_id: target.session_id },
      redacted_summary: {
        via: via.kind,
        channel: via.channel,
        by: via.by.name,
        outcome: result.outcome,
        ...(result.reason ? { reason: result.reason } : {}),
        chars: text.length,
      },
    });
  }
}
