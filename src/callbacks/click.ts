import { SLACK_APPROVE_ACTION, SLACK_REJECT_ACTION } from '../channels/index.js';
import { parseId } from '../envelope/index.js';
import { isRecord, pick } from '../ingress/sources/common/request.js';

export type Decision = 'approve' | 'reject';

/** What a verified callback asks for: a decision, nothing for us, or a body we cannot read. */
export type Click =
  | { kind: 'click'; decision: Decision; approvalId: string; userId: string; teamId?: string }
  | { kind: 'ignored' }
  | { kind: 'malformed'; message: string };

const SLACK_ACTIONS: Readonly<Record<string, Decision>> = {
  [SLACK_APPROVE_ACTION]: 'approve',
  [SLACK_REJECT_ACTION]: 'reject',
};

/**
 * A Slack interactivity payload (already verified and parsed from the `payload` form field). Only
 * `block_actions` carrying one of our two action ids decides; other interactions are not ours.
 */
export function slackClick(payload: unknown): Click {
  if (!isRecord(payload) || typeof payload.type !== 'string') {
    return { kind: 'malformed', message: 'the payload is not a Slack interaction (no type)' };
  }
  if (payload.type !== 'block_actions') return { kind: 'ignored' };
  if (!Array.isArray(payload.actions)) return { kind: 'malformed', message: 'block_actions without actions' };
  const action = payload.actions.find(
    (a): a is Record<string, unknown> =>
      isRecord(a) && typeof a.action_id === 'string' && Object.hasOwn(SLACK_ACTIONS, a.action_id),
  );
  if (!action) return { kind: 'ignored' };
  const approvalId = parseId('approval', action.value);
  if (!approvalId) return { kind: 'malformed', message: 'the button value is not an approval id' };
  const userId = pick(payload, 'user', 'id');
  if (!userId) return { kind: 'malformed', message: 'block_actions without user.id' };
  const teamId = pick(payload, 'team', 'id') ?? pick(payload, 'user', 'team_id');
  return {
    kind: 'click',
    decision: SLACK_ACTIONS[action.action_id as string]!,
    approvalId,
    userId,
    ...(teamId ? { teamId } : {}),
  };
}

// The channel writes `sb:<decision>:<approval id>` (telegramCallbackData).
const TELEGRAM_DATA = /^sb:(approve|reject):(.+)$/;

export type TelegramClick =
  | {
      kind: 'click';
      queryId: string;
      decision: Decision;
      approvalId: string;
      userId: string;
      /** The chat of the message that carried the button; absent for inline-mode messages. */
      chatId?: string;
    }
  /** A callback query that is not ours: still answered, so the client stops its spinner. */
  | { kind: 'foreign'; queryId: string }
  | { kind: 'ignored' }
  | { kind: 'malformed'; message: string };

/** A verified Telegram Update: only a `callback_query` with our callback data decides. */
export function telegramClick(update: Record<string, unknown>): TelegramClick {
  const query = update.callback_query;
  if (query === undefined) return { kind: 'ignored' };
  if (!isRecord(query) || typeof query.id !== 'string' || query.id === '') {
    return { kind: 'malformed', message: 'callback_query without an id' };
  }
  const match = typeof query.data === 'string' ? TELEGRAM_DATA.exec(query.data) : null;
  const approvalId = match ? parseId('approval', match[2]) : undefined;
  if (!match || !approvalId) return { kind: 'foreign', queryId: query.id };
  const from = isRecord(query.from) ? query.from.id : undefined;
  if (typeof from !== 'number' || !Number.isSafeInteger(from)) {
    return { kind: 'malformed', message: 'callback_query without an integer from.id' };
  }
  const chatId = pick(query, 'message', 'chat', 'id');
  return {
    kind: 'click',
    queryId: query.id,
    decision: match[1] as Decision,
    approvalId,
    userId: String(from),
    ...(chatId ? { chatId } : {}),
  };
}

// The value a Feishu card button must carry to decide (docs/callbacks.md): { switchboard, approval_id }.
const FEISHU_DECISIONS: readonly string[] = ['approve', 'reject'];

/**
 * A verified Feishu callback (schema 2.0). Only `card.action.trigger` whose button value carries our
 * `switchboard` key decides; other events and other buttons are not ours.
 */
export function feishuClick(payload: Record<string, unknown>): Click {
  if (pick(payload, 'header', 'event_type') !== 'card.action.trigger') return { kind: 'ignored' };
  const event = payload.event;
  const action = isRecord(event) ? event.action : undefined;
  const value = isRecord(action) ? action.value : undefined;
  if (!isRecord(value) || value.switchboard === undefined) return { kind: 'ignored' };
  if (typeof value.switchboard !== 'string' || !FEISHU_DECISIONS.includes(value.switchboard)) {
    return { kind: 'malformed', message: "the button value's switchboard is not approve or reject" };
  }
  const approvalId = parseId('approval', value.approval_id);
  if (!approvalId) return { kind: 'malformed', message: 'the button value carries no approval id' };
  const userId = pick(payload, 'event', 'operator', 'open_id');
  if (!userId) return { kind: 'malformed', message: 'card.action.trigger without event.operator.open_id' };
  return { kind: 'click', decision: value.switchboard as Decision, approvalId, userId };
}

/** A Telegram `message` update: a text reply to one of our messages, or not ours to handle. */
export type TelegramReply =
  | {
      kind: 'reply';
      /** `update_id`: a redelivered update carries the same one, so it resumes once. */
      updateId: string;
      chatId: string;
      /** The reply's own message id (our answer quotes it). */
      messageId: number;
      /** The message replied to: the one we sent, if it is ours. */
      replyTo: string;
      userId: string;
      text: string;
    }
  /** Not a `message` update: the callback_query path decides what it is. */
  | { kind: 'none' }
  /** A message that is not a person's text reply (a bot, no reply, no text): answered 200, nothing done. */
  | { kind: 'ignored' };

/** Reads a verified Update for a reply to one of our messages; edits and channel posts are ignored. */
export function telegramReply(update: Record<string, unknown>): TelegramReply {
  if (update.message === undefined) {
    const other = ['edited_message', 'channel_post', 'edited_channel_post'];
    return other.some((k) => update[k] !== undefined) ? { kind: 'ignored' } : { kind: 'none' };
  }
  const msg = update.message;
  if (!isRecord(msg) || !isRecord(msg.reply_to_message) || typeof msg.text !== 'string')
    return { kind: 'ignored' };
  const from = isRecord(msg.from) ? msg.from : undefined;
  if (!from || from.is_bot === true || typeof from.id !== 'number') return { kind: 'ignored' };
  const replyTo = msg.reply_to_message.message_id;
  const chatId = pick(msg, 'chat', 'id');
  if (
    typeof update.update_id !== 'number' ||
    typeof msg.message_id !== 'number' ||
    typeof replyTo !== 'number' ||
    !chatId
  )
    return { kind: 'ignored' };
  return {
    kind: 'reply',
    updateId: String(update.update_id),
    chatId,
    messageId: msg.message_id,
    replyTo: String(replyTo),
    userId: String(from.id),
    text: msg.text,
  };
}

/** A Slack Events API `event_callback`: a person's text reply in the thread of one of our messages. */
export type SlackThreadReply =
  | {
      kind: 'reply';
      /** `event_id`: kept on Slack's retries, so a reply resumes once. */
      eventId: string;
      /** The parent message's `ts`: the one we posted, if it is ours. */
      threadTs: string;
      channelId: string;
      userId: string;
      teamId?: string;
      text: string;
    }
  | { kind: 'ignored' }
  | { kind: 'malformed'; message: string };

/**
 * Only plain messages count: edits, deletions, joins and bot posts carry a `subtype` or a `bot_id`,
 * and a message outside a thread (or the parent itself, `thread_ts == ts`) is not a reply.
 */
export function slackThreadReply(payload: Record<string, unknown>): SlackThreadReply {
  if (payload.type !== 'event_callback') return { kind: 'ignored' };
  const event = payload.event;
  if (!isRecord(event)) return { kind: 'malformed', message: 'event_callback without an event object' };
  const eventId = pick(payload, 'event_id');
  if (!eventId) return { kind: 'malformed', message: 'event_callback without event_id' };
  if (event.type !== 'message' || event.subtype !== undefined || event.bot_id !== undefined)
    return { kind: 'ignored' };
  const threadTs = typeof event.thread_ts === 'string' ? event.thread_ts : undefined;
  const ts = typeof event.ts === 'string' ? event.ts : undefined;
  const user = typeof event.user === 'string' ? event.user : undefined;
  const channelId = typeof event.channel === 'string' ? event.channel : undefined;
  if (!threadTs || threadTs === ts || !user || !channelId || typeof event.text !== 'string')
    return { kind: 'ignored' };
  const teamId = pick(payload, 'team_id') ?? pick(event, 'team');
  return {
    kind: 'reply',
    eventId,
    threadTs,
    channelId,
    userId: user,
    ...(teamId ? { teamId } : {}),
    text: event.text,
  };
}
