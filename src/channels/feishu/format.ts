import { createHash, createHmac } from 'node:crypto';
import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message, Severity } from '../../notify/port.js';
import { envName, httpUrl, JSON_HEADERS, requireSecret, resolveUrl, urlOrEnv } from '../http.js';
import { headline, labels, plainText, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

/** The open platform of Feishu; Lark tenants use `https://open.larksuite.com`. */
export const FEISHU_OPEN_API = 'https://open.feishu.cn';

export const RECEIVE_ID_TYPES = ['chat_id', 'open_id', 'user_id', 'union_id', 'email'] as const;
export type ReceiveIdType = (typeof RECEIVE_ID_TYPES)[number];

// What each id looks like, so a chat id pasted as an open_id fails at start-up, not at 3 a.m.
// user_id is tenant-defined (any string), so it is not checked.
const RECEIVE_ID_SHAPE: Partial<Record<ReceiveIdType, { re: RegExp; hint: string }>> = {
  chat_id: { re: /^oc_[A-Za-z0-9]+$/, hint: 'a chat id starts with oc_' },
  open_id: { re: /^ou_[A-Za-z0-9]+$/, hint: 'an open_id starts with ou_' },
  union_id: { re: /^on_[A-Za-z0-9]+$/, hint: 'a union_id starts with on_' },
  email: { re: /^[^@\s]+@[^@\s]+$/, hint: 'an email address has one @' },
};

/** App-bot mode: an app (custom or store app with the bot capability) sends through `im/v1/messages`. */
export const feishuAppConfig = z
  .strictObject({
    /** The App ID from the developer console (Credentials & Basic Info). */
    app_id: z.string().regex(/^cli_[A-Za-z0-9]+$/, 'must be the App ID from the developer console (cli_…)'),
    /** The App Secret, by environment variable. */
    app_secret_env: envName,
    /** Where the card goes: a chat the bot is in, or a person in the app's availability scope. */
    receive_id: z.string().min(1).max(200),
    receive_id_type: z.enum(RECEIVE_ID_TYPES).default('chat_id'),
    base_url: httpUrl.default(FEISHU_OPEN_API),
  })
  .superRefine((app, ctx) => {
    const shape = RECEIVE_ID_SHAPE[app.receive_id_type];
    if (shape && !shape.re.test(app.receive_id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['receive_id'],
        message: `does not look like a ${app.receive_id_type} (${shape.hint}); fix receive_id or set receive_id_type`,
      });
    }
  });
export type FeishuAppConfig = z.infer<typeof feishuAppConfig>;

export const feishuConfig = z
  .strictObject({
    type: z.literal('feishu'),
    /** Webhook mode: `https://open.feishu.cn/open-apis/bot/v2/hook/<token>` (or open.larksuite.com); the token is the credential. */
    ...urlOrEnv,
    /** Webhook mode: the 签名校验 secret; without it the bot must rely on keywords or an IP allowlist. */
    secret_env: envName.optional(),
    /** App mode (instead of url/url_env): approve/reject become callback buttons. */
    app: feishuAppConfig.optional(),
    /** open_id (`ou_…`) of the owner, mentioned on critical messages only. */
    mention_open_id: z
      .string()
      .regex(/^ou_[A-Za-z0-9]+$/)
      .optional(),
  })
  .superRefine((c, ctx) => {
    const webhook = c.url !== undefined || c.url_env !== undefined;
    if (c.app && webhook) {
      ctx.addIssue({
        code: 'custom',
        path: ['app'],
        message:
          'choose one mode: url/url_env post through a custom-bot webhook, app posts as an app bot; remove one',
      });
    } else if (!c.app && !webhook) {
      ctx.addIssue({
        code: 'custom',
        message: 'set url or url_env (custom-bot webhook) or app (app bot with callback buttons)',
      });
    } else if (c.url !== undefined && c.url_env !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'set exactly one of url or url_env' });
    }
    if (c.app && c.secret_env !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['secret_env'],
        message:
          'signs custom-bot webhooks only; an app bot authenticates with app.app_secret_env — remove it',
      });
    }
  });
export type FeishuConfig = z.infer<typeof feishuConfig>;

/** Custom-bot requests are limited to 20 KB; half goes to the text, the rest to the card frame and escaping. */
export const FEISHU_TEXT_MAX_BYTES = 10_000;

/** A card header is one or two lines on a phone. */
const TITLE_MAX = 200;

/** `im/v1/messages` de-duplicates on `uuid` for an hour; the field holds at most 50 characters. */
export const FEISHU_UUID_MAX = 50;

const TEMPLATE: Record<Severity, string> = { info: 'blue', warn: 'orange', critical: 'red' };

/**
 * The custom-bot signature (signature_vectors.md 4a): the HMAC key is `timestamp + "\n" + secret`
 * and the message is EMPTY. DingTalk does the reverse; swapping them is the common bug.
 */
export function feishuSign(timestampSeconds: number, secret: string): string {
  return createHmac('sha256', `${timestampSeconds}\n${secret}`).update('').digest('base64');
}

/** The webhook card (JSON 1.0) or, with `app`, the `im/v1/messages` request (card JSON 2.0). */
export function formatFeishu(input: Message, config: FeishuConfig, ctx: FormatContext): HttpRequest {
  return config.app ? formatApp(input, config, config.app) : formatWebhook(input, config, ctx);
}

function formatWebhook(input: Message, config: FeishuConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  // Agent text goes into plain_text elements: no markdown, no <at> tags, so it cannot ping anyone.
  const elements: unknown[] = [{ tag: 'div', text: { tag: 'plain_text', content: feishuText(msg) } }];
  if (msg.mention && config.mention_open_id) {
    elements.push({ tag: 'markdown', content: `<at id=${config.mention_open_id}></at>` });
  }
  const buttons: unknown[] = [];
  if (msg.actions) {
    buttons.push(
      linkButton(l.approve, 'primary', msg.actions.approveUrl),
      linkButton(l.reject, 'danger', msg.actions.rejectUrl),
      linkButton(l.open, 'default', msg.actions.pageUrl),
    );
  }
  if (msg.reply) buttons.push(linkButton(l.reply, 'default', msg.reply.url));
  if (buttons.length > 0) elements.push({ tag: 'action', actions: buttons });
  const card = {
    config: { wide_screen_mode: true },
    header: {
      title: { tag: 'plain_text', content: truncate(headline(msg), TITLE_MAX, 'chars') },
      template: TEMPLATE[msg.severity],
    },
    elements,
  };
  const body: Record<string, unknown> = {};
  if (config.secret_env) {
    const ts = Math.floor(ctx.now / 1000);
    body['timestamp'] = String(ts);
    body['sign'] = feishuSign(ts, requireSecret(ctx, config.secret_env));
  }
  body['msg_type'] = 'interactive';
  body['card'] = card;
  return { url: resolveUrl(config, ctx), headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}

/**
 * App mode renders the whole `im/v1/messages` request except the `Authorization` header: the
 * tenant access token is fetched by `send()` (format stays pure and holds no credential).
 */
function formatApp(input: Message, config: FeishuConfig, app: FeishuAppConfig): HttpRequest {
  const body = {
    receive_id: app.receive_id,
    msg_type: 'interactive',
    // `content` is the card as a JSON *string*, not an object (im/v1/messages create).
    content: JSON.stringify(feishuAppCard(input, config)),
    uuid: feishuUuid(input.eventId, app),
  };
  return {
    url: `${openApiBase(app)}/open-apis/im/v1/messages?receive_id_type=${app.receive_id_type}`,
    headers: { ...JSON_HEADERS },
    body: JSON.stringify(body),
  };
}

/**
 * The card an app sends (card JSON 2.0). Approve / reject are callback buttons whose value is what
 * `src/callbacks/click.ts` (feishuClick) reads; the page link stays for people the app cannot reach.
 */
export function feishuAppCard(input: Message, config: Pick<FeishuConfig, 'mention_open_id'>) {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const elements: unknown[] = [{ tag: 'div', text: { tag: 'plain_text', content: feishuText(msg) } }];
  if (msg.mention && config.mention_open_id) {
    elements.push({ tag: 'markdown', content: `<at id=${config.mention_open_id}></at>` });
  }
  if (msg.actions) {
    const { approvalId } = msg.actions;
    elements.push(
      callbackButton(l.approve, 'primary', { switchboard: 'approve', approval_id: approvalId }),
      callbackButton(l.reject, 'danger', { switchboard: 'reject', approval_id: approvalId }),
      urlButton(l.open, 'default', msg.actions.pageUrl),
    );
  }
  if (msg.reply) elements.push(urlButton(l.reply, 'default', msg.reply.url));
  return {
    schema: '2.0',
    // A shared card: PATCH im/v1/messages/:id updates only cards that declare it, before and after.
    config: { update_multi: true },
    header: {
      title: { tag: 'plain_text', content: truncate(headline(msg), TITLE_MAX, 'chars') },
      template: TEMPLATE[msg.severity],
    },
    body: { elements },
  };
}

/** How an approval ended, as the card shows it after the decision. */
export interface FeishuCardOutcome {
  /** The card's header and text as first sent (from the notification). */
  title: string;
  summary: string;
  state: 'approved' | 'rejected' | 'expired';
  /** Who decided (a key name, `feishu:ou_…`, `slack:U…`); absent for an expiry. */
  decidedBy?: string;
  /** When it was decided or expired (ms since the epoch). */
  at: number;
}

const OUTCOME_TEMPLATE: Record<FeishuCardOutcome['state'], string> = {
  approved: 'green',
  rejected: 'red',
  expired: 'grey',
};

/** `2026-12-01 15:30 UTC`: a phone shows it in one line, and it is the same for every reader. */
export function feishuCardTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The card an approval's card becomes once decided (PATCH im/v1/messages/:message_id): the same title
 * and summary, no buttons (nothing is left to press), and one line saying who decided and when.
 * Everything is plain_text, so a principal name can mention no one.
 */
export function feishuDecidedCard(o: FeishuCardOutcome) {
  const when = feishuCardTime(o.at);
  const line =
    o.state === 'expired'
      ? `Expired at ${when}, undecided.`
      : `${o.state === 'approved' ? 'Approved' : 'Rejected'} by ${truncate(o.decidedBy ?? 'unknown', 200, 'chars')} at ${when}.`;
  return {
    schema: '2.0',
    config: { update_multi: true },
    header: {
      title: { tag: 'plain_text', content: truncate(o.title, TITLE_MAX, 'chars') },
      template: OUTCOME_TEMPLATE[o.state],
    },
    body: {
      elements: [
        {
          tag: 'div',
          text: { tag: 'plain_text', content: truncate(o.summary, FEISHU_TEXT_MAX_BYTES, 'bytes') },
        },
        { tag: 'div', text: { tag: 'plain_text', content: line } },
      ],
    },
  };
}

/**
 * Feishu keeps a `uuid` for an hour and sends a repeated one at most once, so a retry of the same
 * event never posts twice. The receiver is part of it: one event may go to several app channels.
 */
export function feishuUuid(eventId: string, app: Pick<FeishuAppConfig, 'receive_id' | 'receive_id_type'>) {
  const digest = createHash('sha256')
    .update(`${eventId}\n${app.receive_id_type}\n${app.receive_id}`)
    .digest('hex');
  return `sb_${digest.slice(0, 40)}`;
}

export function openApiBase(app: Pick<FeishuAppConfig, 'base_url'>): string {
  return app.base_url.replace(/\/+$/, '');
}

/** The main text; the approval links travel as buttons. */
export function feishuText(msg: Message): string {
  return plainText(msg, FEISHU_TEXT_MAX_BYTES, 'bytes', { headline: false, links: false });
}

type ButtonType = 'primary' | 'danger' | 'default';

// Link buttons: opening one is a GET, which shows the confirmation page and never decides by itself.
function linkButton(text: string, type: ButtonType, url: string) {
  return { tag: 'button', text: { tag: 'plain_text', content: text }, type, url };
}

// Card JSON 2.0 buttons carry their effect in `behaviors`.
function urlButton(text: string, type: ButtonType, url: string) {
  return {
    tag: 'button',
    text: { tag: 'plain_text', content: text },
    type,
    behaviors: [{ type: 'open_url', default_url: url }],
  };
}

function callbackButton(text: string, type: ButtonType, value: Record<string, string>) {
  return {
    tag: 'button',
    text: { tag: 'plain_text', content: text },
    type,
    behaviors: [{ type: 'callback', value }],
  };
}
