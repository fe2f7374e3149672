import type { ApprovalView } from '../approvals/port.js';
import type { SendDeps, SendResult } from '../channels/index.js';
import {
  type FeishuCardOutcome,
  feishuConfig,
  feishuDecidedCard,
  feishuVerdict,
  updateFeishuAppCard,
} from '../channels/feishu/index.js';
import type { DynamicSender } from '../delivery/port.js';
import type { Envelope } from '../envelope/index.js';
import type { Message } from '../notify/port.js';
import type { CallbacksDeps } from './module.js';
import * as q from './sql.js';

/**
 * Feishu app cards follow their approval: each card an app channel posted for an approval is
 * recorded with its message id (`feishu_cards`), and when the approval is approved, rejected or
 * expires, every one of them is replaced in place by a card without buttons that says who decided and
 * when. The update is a delivery of its own (`feishu-card:<channel>/<message id>`), so it gets the
 * engine's retries, breaker, dead letters and attempt events. Pinned by `feishu-app.test.ts`.
 */

/** The destination prefix and `channel_type` of card updates. */
export const FEISHU_CARD_TYPE = 'feishu-card';

/** Feishu updates a card only within 14 days of sending (im/v1/messages patch); older rows are dropped. */
export const FEISHU_CARD_UPDATE_DAYS = 14;

const ENDED = new Set(['agent.approval.approved', 'agent.approval.rejected', 'agent.approval.expired']);

export const endsApproval = (type: string): boolean => ENDED.has(type);

/** What one update delivery stores: which card, of which approval. The decision is read when sending. */
interface CardUpdate extends q.FeishuCardRow {
  eventId: string;
}

/** The app config of a Feishu channel, or undefined when the channel is gone or posts as a webhook bot. */
function appOf(services: Pick<CallbacksDeps, 'delivery'>, channel: string) {
  const parsed = feishuConfig.safeParse(services.delivery.channel(channel));
  return parsed.success ? parsed.data.app : undefined;
}

async function enqueueUpdate(services: CallbacksDeps, eventId: string, card: q.FeishuCardRow): Promise<void> {
  const payload: CardUpdate = { ...card, eventId };
  await services.db.tx((tx) =>
    services.delivery.enqueue(tx, {
      eventId,
      destination: `${FEISHU_CARD_TYPE}:${card.channel}/${card.message_id}`,
      // Not a channel Message: the engine hands the dynamic sender its payload as stored.
      message: payload as unknown as Message,
    }),
  );
}

/**
 * `integration.delivery.succeeded` of a Feishu app channel whose notification carried an approval:
 * remember the card. When the approval ended before the card was delivered, update it at once.
 */
export async function onFeishuDelivered(services: CallbacksDeps, event: Envelope): Promise<void> {
  const s = event.redacted_summary;
  const messageId = typeof s.provider_id === 'string' ? s.provider_id : undefined;
  const channel = typeof s.destination === 'string' ? s.destination : undefined;
  if (s.channel !== 'feishu' || !messageId || !channel || !event.causation_id) return;
  if (!appOf(services, channel)) return;
  const sent = (await services.log.get(event.causation_id))?.envelope;
  const approvalId = sent?.redacted_summary.approval_id;
  if (sent?.type !== 'agent.notification.sent' || typeof approvalId !== 'string') return;
  const card: q.FeishuCardRow = {
    channel,
    message_id: messageId,
    approval_id: approvalId,
    title: String(sent.redacted_summary.title ?? ''),
    summary: String(sent.redacted_summary.summary ?? ''),
  };
  await services.db.query(q.insertFeishuCard(card, services.now()));
  const view = await services.approvals.get(approvalId);
  if (!view || view.state === 'pending') return;
  // Keyed by the decision's own event, as `onApprovalEnded` keys it: when both see this card (the
  // decision landed between the insert and the read), the second enqueue is a no-op.
  const ended = await services.log.list({
    correlationId: sent.correlation_id,
    type: `agent.approval.${view.state}`,
    newestFirst: true,
    limit: 50,
  });
  const decision = ended.find((e) => e.envelope.redacted_summary.approval_id === approvalId);
  await enqueueUpdate(services, decision?.envelope.event_id ?? event.event_id, card);
}

/** An approval ended: one update delivery per card of it (the decision event's id keys them). */
export async function onApprovalEnded(services: CallbacksDeps, event: Envelope): Promise<void> {
  const approvalId = event.redacted_summary.approval_id;
  if (typeof approvalId !== 'string') return;
  const cards = await services.db.query<q.FeishuCardRow>(q.selectFeishuCards(approvalId));
  for (const card of cards) await enqueueUpdate(services, event.event_id, card);
}

/** The approval's end as the card shows it; undefined while it is still pending. */
function outcomeOf(view: ApprovalView, card: q.FeishuCardRow): FeishuCardOutcome | undefined {
  if (view.state === 'pending') return undefined;
  const at = Date.parse(view.decided_at ?? view.expires_at);
  return {
    title: card.title,
    summary: card.summary,
    state: view.state,
    ...(view.state !== 'expired' && view.decided_by ? { decidedBy: view.decided_by } : {}),
    at: Number.isFinite(at) ? at : Date.parse(view.expires_at),
  };
}

/** Sends one card update: the approval as it stands now, through the channel's app and token. */
export function feishuCardSender(services: CallbacksDeps): DynamicSender {
  return {
    type: FEISHU_CARD_TYPE,
    verdict: feishuVerdict,
    async send(raw: unknown, deps: SendDeps): Promise<SendResult> {
      const u = raw as CardUpdate;
      const app = appOf(services, u.channel);
      if (!app) return { kind: 'dead', reason: `channel ${u.channel} is no longer a Feishu app channel` };
      const view = await services.approvals.get(u.approval_id);
      if (!view) return { kind: 'dead', reason: `approval ${u.approval_id} no longer exists` };
      const outcome = outcomeOf(view, u);
      if (!outcome) return { kind: 'dead', reason: `approval ${u.approval_id} is still pending` };
      return updateFeishuAppCard(u.message_id, feishuDecidedCard(outcome), app, deps);
    },
  };
}

/** Forgets cards Feishu would no longer update. */
export async function sweepFeishuCards(services: CallbacksDeps): Promise<void> {
  await services.db.query(q.deleteFeishuCardsBefore(services.now() - FEISHU_CARD_UPDATE_DAYS * 86_400_000));
}
