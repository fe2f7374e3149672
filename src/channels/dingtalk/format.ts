import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message } from '../../notify/port.js';
import {
  envName,
  exactlyOneUrl,
  JSON_HEADERS,
  ONE_URL,
  requireSecret,
  resolveUrl,
  urlOrEnv,
} from '../http.js';
import { headline, labels, plainText, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

export const dingtalkConfig = z
  .strictObject({
    type: z.literal('dingtalk'),
    /** `https://oapi.dingtalk.com/robot/send?access_token=…`; the token is the credential. */
    ...urlOrEnv,
    /** The 加签 secret (`SEC…`). */
    secret_env: envName.optional(),
    /** With the keyword security mode, a message without one of the keywords is refused (310000). */
    keyword: z.string().min(1).optional(),
    /** Mobile number of the owner, @-mentioned on critical messages only. */
    mention_mobile: z
      .string()
      .regex(/^\+?[0-9-]{5,20}$/)
      .optional(),
  })
  .refine(exactlyOneUrl, ONE_URL);
export type DingtalkConfig = z.infer<typeof dingtalkConfig>;

/** DingTalk publishes no markdown limit; 4000 characters stays far below the request size limit even in CJK. */
export const DINGTALK_TEXT_MAX_CHARS = 4000;
/** Room kept for the owner mention: "\n\n@" and a mobile of up to 20 characters. */
const MENTION_ROOM = 24;
/** The title is what the chat list previews; longer is cut there anyway. */
const TITLE_MAX = 100;

/** 加签 (signature_vectors.md 5): HMAC keyed by the SECRET over `timestamp + "\n" + secret`, base64, URL-encoded. */
export function dingtalkSign(timestampMs: number, secret: string): string {
  return encodeURIComponent(
    createHmac('sha256', secret).update(`${timestampMs}\n${secret}`).digest('base64'),
  );
}

// DingTalk markdown needs two trailing spaces (or a blank line) for a line break.
const mdLines = (text: string) => text.replace(/\r?\n/g, '  \n');

export function dingtalkText(msg: Message, config: DingtalkConfig): string {
  const head = config.keyword && !headline(msg).includes(config.keyword) ? `[${config.keyword}] ` : '';
  const links = msg.actions === undefined; // with actions the buttons carry them
  return head + plainText(msg, DINGTALK_TEXT_MAX_CHARS - head.length - MENTION_ROOM, 'chars', { links });
}

export function formatDingtalk(input: Message, config: DingtalkConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const title = truncate(headline(msg), TITLE_MAX, 'chars');
  let text = mdLines(dingtalkText(msg, config));
  let body: Record<string, unknown>;
  if (msg.actions) {
    body = {
      msgtype: 'actionCard',
      actionCard: {
        title,
        text,
        btnOrientation: '1',
        // Link buttons: DingTalk opens them (GET), which shows the confirmation page.
        btns: [
          { title: l.approve, actionURL: msg.actions.approveUrl },
          { title: l.reject, actionURL: msg.actions.rejectUrl },
        ],
      },
    };
  } else {
    const mobiles = msg.mention && config.mention_mobile ? [config.mention_mobile] : [];
    // The mobile must also appear in markdown text for DingTalk to render the mention.
    if (mobiles.length > 0) text += `\n\n@${config.mention_mobile}`;
    body = { msgtype: 'markdown', markdown: { title, text }, at: { atMobiles: mobiles, isAtAll: false } };
  }
  let url = resolveUrl(config, ctx);
  if (config.secret_env) {
    const sep = url.includes('?') ? '&' : '?';
    url += `${sep}timestamp=${ctx.now}&sign=${dingtalkSign(ctx.now, requireSecret(ctx, config.secret_env))}`;
  }
  return { url, headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}
