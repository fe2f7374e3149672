import type { Context } from 'hono';
import { AppError } from '../errors/index.js';
import { type InboundRequest, REJECT_ERROR_CODE, type VerifyResult } from '../ingress/source.js';
import { verifyFeishu } from '../ingress/sources/feishu/index.js';
import { verifySlack } from '../ingress/sources/slack/index.js';
import { verifyTelegram } from '../ingress/sources/telegram/index.js';
import { isRecord } from '../ingress/sources/common/request.js';
import { readBody, requireJsonContentType } from '../kernel/body.js';
import type { App, AppEnv } from '../kernel/module.js';
import { MAX_RESUME_MESSAGE_CHARS } from '../tasks/routes.js';
import type { ReplyService } from '../replies/port.js';
import type { ReplyOutcome } from '../replies/service.js';
import type { CallbacksDeps } from './module.js';
import {
  feishuClick,
  slackClick,
  slackThreadReply,
  telegramClick,
  type TelegramReply,
  telegramReply,
} from './click.js';
import type { FeishuCallbackConfig, SlackCallbackConfig, TelegramCallbackConfig } from './config.js';
import { allowed, decideClick, OUTCOME_TEXT, type Outcome } from './decide.js';
import { prefix } from '../text/index.js';

/** A configured callback channel with its secret resolved at start. */
export interface SlackEndpoint {
  config: SlackCallbackConfig;
  secret: string;
}
export interface TelegramEndpoint {
  config: TelegramCallbackConfig;
  token: string;
}
export interface FeishuEndpoint {
  config: FeishuCallbackConfig;
  token: string;
  encryptKey?: string;
}
export interface CallbackState {
  slack: ReadonlyMap<string, SlackEndpoint>;
  telegram: ReadonlyMap<string, TelegramEndpoint>;
  feishu: ReadonlyMap<string, FeishuEndpoint>;
}

// Feishu shows the toast to the person who pressed; the type picks its colour and icon.
const FEISHU_TOAST: Readonly<Record<Outcome, 'success' | 'info' | 'error'>> = {
  approved: 'success',
  rejected: 'success',
  already_decided: 'info',
  expired: 'info',
  not_found: 'info',
  not_allowed: 'error',
};

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

function lowerHeaders(c: Context<AppEnv>): Record<string, string> {
  const out: Record<string, string> = {};
  c.req.raw.headers.forEach((value, key) => {
    out[key.toLowerCase()] = value;
  });
  return out;
}

/**
 * Reads one callback's raw body (within the body limit) and runs the provider's verifier over it; a
 * rejection becomes its 401 / 400, so a route continues only with a verified payload or a challenge.
 */
async function verifiedCallback(
  c: Context<AppEnv>,
  services: CallbacksDeps,
  verify: (req: InboundRequest) => VerifyResult,
): Promise<Exclude<VerifyResult, { kind: 'rejected' }>> {
  const body = await readBody(c, services.config.server.body_limit_bytes);
  const verified = verify({ headers: lowerHeaders(c), body, now: services.now() });
  if (verified.kind === 'rejected') throw new AppError(REJECT_ERROR_CODE[verified.reason], verified.message);
  return verified;
}

function unknownChannel(kind: string, name: string): AppError {
  return new AppError(
    'not_found',
    `no ${kind} callback channel is named ${JSON.stringify(prefix(name, 64))}`,
  );
}

function approvalsOf(services: CallbacksDeps) {
  return services.approvals;
}

/**
 * A click counts only from the chat the channel posts to, when that chat is a numeric id: a bot in
 * several chats would otherwise take decisions from a chat the owner never configured. `@channel`
 * names cannot be compared with the numeric id in the update, so they are not checked.
 */
function fromChannelChat(services: CallbacksDeps, channel: string, chatId: string | undefined): boolean {
  const configured = services.delivery.channel(channel)?.['chat_id'];
  const numeric =
    typeof configured === 'number' || (typeof configured === 'string' && /^-?\d+$/.test(configured));
  return !numeric || chatId === String(configured);
}

/** What the person who replied in Telegram reads back, as a reply to their message. */
const REPLY_TEXT: Readonly<Record<Exclude<ReplyOutcome['kind'], 'refused'>, string>> = {
  resumed: 'Sent: the agent resumed its session with your reply.',
  expired: 'This message no longer takes replies (its reply window expired); nothing was sent.',
  used: '',
};

/**
 * A Telegram reply to a message that carried a reply target resumes that task's session with the text.
 * Replies from another chat, from someone not allowed, or to a message we do not know are ignored
 * (200, nothing said: the bot may sit in chats that are none of our business). The answer is a
 * `sendMessage` in the webhook response, quoting the reply.
 */
async function answerTelegramReply(
  services: CallbacksDeps,
  replies: ReplyService,
  channel: string,
  endpoint: TelegramEndpoint,
  reply: Extract<TelegramReply, { kind: 'reply' }>,
): Promise<Record<string, unknown> | undefined> {
  if (!allowed(endpoint.config.allowed_user_ids, reply.userId)) return undefined;
  if (!fromChannelChat(services, channel, reply.chatId)) return undefined;
  const target = await replies.target(channel, reply.replyTo);
  if (!target) return undefined;
  let text: string;
  if (reply.text.trim() === '') return undefined;
  if (reply.text.length > MAX_RESUME_MESSAGE_CHARS) text = 'The reply is too long; nothing was sent.';
  else {
    const outcome = await replies.resume(
      { task_id: target.task_id, session_id: target.session_id, expires_at: Number(target.expires_at) },
      reply.text,
      {
        kind: 'telegram',
        channel,
        by: { name: `telegram:${reply.userId}`, role: 'approver' },
        use_id: `telegram:${channel}:${reply.updateId}`,
      },
    );
    text = outcome.kind === 'refused' ? `Not sent: ${outcome.reason}.` : REPLY_TEXT[outcome.kind];
  }
  if (text === '') return undefined;
  return {
    method: 'sendMessage',
    chat_id: reply.chatId,
    text,
    reply_parameters: { message_id: reply.messageId, allow_sending_without_reply: true },
  };
}

/**
 * A Slack thread reply counts only in the channel the messages go to, when the config names it by id
 * (`C…`, `G…`, `D…`); a `#name` cannot be compared with the id in the event.
 */
function fromSlackChannel(services: CallbacksDeps, channel: string, channelId: string): boolean {
  const configured = services.delivery.channel(channel)?.['channel'];
  return typeof configured !== 'string' || !/^[CGD][A-Z0-9]+$/.test(configured) || configured === channelId;
}

/**
 * `POST /v1/callbacks/slack/:channel` and `POST /v1/callbacks/telegram/:channel`. No bearer key: the
 * platform's signature (Slack) or secret token (Telegram) is the credential, checked over the raw
 * bytes before anything is parsed. Once verified, every answer is 200 with text for the person, so a
 * platform never retries a click that was understood.
 */
export function callbackRoutes(app: App, services: CallbacksDeps, state: () => CallbackState): void {
  app.post('/v1/callbacks/slack/:channel', async (c) => {
    const name = c.req.param('channel');
    const endpoint = state().slack.get(name);
    if (!endpoint) throw unknownChannel('slack', name);
    const type = c.req.header('content-type') ?? '';
    if (!FORM_TYPE.test(type)) {
      throw new AppError('unsupported_media_type', 'send Content-Type: application/x-www-form-urlencoded');
    }
    const verified = await verifiedCallback(c, services, (req) =>
      verifySlack(req, [endpoint.secret], endpoint.config.tolerance_seconds),
    );
    if (verified.kind === 'challenge') throw new AppError('bad_request', 'not an interaction payload');

    const click = slackClick(verified.payload);
    if (click.kind === 'malformed') throw new AppError('bad_request', click.message);
    if (click.kind === 'ignored') return c.body(null, 200);
    const { config } = endpoint;
    let outcome: Outcome;
    if (config.team_id !== undefined && click.teamId !== config.team_id) outcome = 'not_allowed';
    else if (!allowed(config.allowed_user_ids, click.userId)) outcome = 'not_allowed';
    else {
      outcome = await decideClick(approvalsOf(services), click, {
        name: `slack:${click.userId}`,
        role: 'approver',
      });
    }
    // block_actions acknowledgements only need the 200; the text is for legacy message actions.
    return c.json({ response_type: 'ephemeral', replace_original: false, text: OUTCOME_TEXT[outcome] });
  });

  // The Events API: a reply in the thread of a message we posted through chat.postMessage (which told
  // us its `ts`) resumes that task's session. Slack reads only the status; every verified event is 200.
  app.post('/v1/callbacks/slack/:channel/events', async (c) => {
    const name = c.req.param('channel');
    const endpoint = state().slack.get(name);
    if (!endpoint) throw unknownChannel('slack', name);
    requireJsonContentType(c);
    const verified = await verifiedCallback(c, services, (req) =>
      verifySlack(req, [endpoint.secret], endpoint.config.tolerance_seconds),
    );
    if (verified.kind === 'challenge') return c.json(verified.response.body, 200);
    if (!isRecord(verified.payload)) throw new AppError('bad_request', 'not a Slack event');
    const reply = slackThreadReply(verified.payload);
    if (reply.kind === 'malformed') throw new AppError('bad_request', reply.message);
    if (reply.kind === 'ignored') return c.body(null, 200);
    const { config } = endpoint;
    if (config.team_id !== undefined && reply.teamId !== config.team_id) return c.body(null, 200);
    if (!allowed(config.allowed_user_ids, reply.userId)) return c.body(null, 200);
    if (!fromSlackChannel(services, name, reply.channelId)) return c.body(null, 200);
    const replies = services.replies;
    const target = await replies?.target(name, reply.threadTs);
    if (!replies || !target || reply.text.trim() === '' || reply.text.length > MAX_RESUME_MESSAGE_CHARS)
      return c.body(null, 200);
    // A retry (X-Slack-Retry-Num) carries the same event_id: `reply_uses` makes it resume once.
    await replies.resume(
      { task_id: target.task_id, session_id: target.session_id, expires_at: Number(target.expires_at) },
      reply.text,
      {
        kind: 'slack',
        channel: name,
        by: { name: `slack:${reply.userId}`, role: 'approver' },
        use_id: `slack:${name}:${reply.eventId}`,
      },
    );
    return c.body(null, 200);
  });

  app.post('/v1/callbacks/telegram/:channel', async (c) => {
    const name = c.req.param('channel');
    const endpoint = state().telegram.get(name);
    if (!endpoint) throw unknownChannel('telegram', name);
    requireJsonContentType(c);
    const verified = await verifiedCallback(c, services, (req) => verifyTelegram(req, [endpoint.token]));
    if (verified.kind === 'challenge' || !isRecord(verified.payload)) {
      throw new AppError('bad_request', 'not a Telegram Update');
    }

    const reply = telegramReply(verified.payload);
    if (reply.kind === 'ignored') return c.body(null, 200);
    if (reply.kind === 'reply') {
      // Without the replies module running, no message carries a reply target: nothing to resume.
      const answer = services.replies
        ? await answerTelegramReply(services, services.replies, name, endpoint, reply)
        : undefined;
      return answer ? c.json(answer) : c.body(null, 200);
    }
    const click = telegramClick(verified.payload);
    if (click.kind === 'malformed') throw new AppError('bad_request', click.message);
    if (click.kind === 'ignored') return c.body(null, 200);
    if (click.kind === 'foreign') {
      return c.json({ method: 'answerCallbackQuery', callback_query_id: click.queryId });
    }
    const outcome =
      allowed(endpoint.config.allowed_user_ids, click.userId) && fromChannelChat(services, name, click.chatId)
        ? await decideClick(approvalsOf(services), click, {
            name: `telegram:${click.userId}`,
            role: 'approver',
          })
        : 'not_allowed';
    // Telegram runs a method returned in the webhook response body: the answer needs no outbound call.
    return c.json({
      method: 'answerCallbackQuery',
      callback_query_id: click.queryId,
      text: OUTCOME_TEXT[outcome],
    });
  });

  app.post('/v1/callbacks/feishu/:channel', async (c) => {
    const name = c.req.param('channel');
    const endpoint = state().feishu.get(name);
    if (!endpoint) throw unknownChannel('feishu', name);
    requireJsonContentType(c);
    // The event verifier: signature (and decryption) when an encrypt key is set, the body's token always.
    const verified = await verifiedCallback(c, services, (req) =>
      verifyFeishu(req, {
        tokens: [endpoint.token],
        encryptKeys: endpoint.encryptKey === undefined ? [] : [endpoint.encryptKey],
        toleranceSeconds: endpoint.config.tolerance_seconds,
      }),
    );
    if (verified.kind === 'challenge') return c.json(verified.response.body, 200);
    if (!isRecord(verified.payload)) throw new AppError('bad_request', 'not a Feishu callback');

    const click = feishuClick(verified.payload);
    if (click.kind === 'malformed') throw new AppError('bad_request', click.message);
    // Feishu wants a 200 within 3 s; an empty object leaves the card as it is and shows nothing.
    if (click.kind === 'ignored') return c.json({});
    const outcome = allowed(endpoint.config.allowed_open_ids, click.userId)
      ? await decideClick(approvalsOf(services), click, { name: `feishu:${click.userId}`, role: 'approver' })
      : 'not_allowed';
    return c.json({ toast: { type: FEISHU_TOAST[outcome], content: OUTCOME_TEXT[outcome] } });
  });
}
