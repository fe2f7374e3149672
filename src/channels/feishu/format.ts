import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { FormatContext, HttpRequest, Message, Severity } from '../channel.js';
import {
  envName,
  exactlyOneUrl,
  JSON_HEADERS,
  ONE_URL,
  requireSecret,
  resolveUrl,
  urlOrEnv,
} from '../http.js';
import { headline, labels, plainText, sanitize, truncate } from '../text.js';

export const feishuConfig = z
  .strictObject({
    type: z.literal('feishu'),
    /** `https://open.feishu.cn/open-apis/bot/v2/hook/<token>` (or open.larksuite.com); the token is the credential. */
    ...urlOrEnv,
    /** The 签名校验 secret; without it the bot must rely on keywords or an IP allowlist. */
    secret_env: envName.optional(),
    /** open_id (`ou_…`) of the owner, mentioned on critical messages only. */
    mention_open_id: z
      .string()
      .regex(/^ou_[A-Za-z0-9]+$/)
      .optional(),
  })
  .refine(exactlyOneUrl, ONE_URL);
export type FeishuConfig = z.infer<typeof feishuConfig>;

/** Custom-bot requests are limited to 20 KB; half goes to the text, the rest to the card frame and escaping. */
export const FEISHU_TEXT_MAX_BYTES = 10_000;

/** A card header is one or two lines on a phone. */
const TITLE_MAX = 200;

const TEMPLATE: Record<Severity, string> = { info: 'blue', warn: 'orange', critical: 'red' };

/**
 * The custom-bot signature (signature_vectors.md 4a): the HMAC key is `timestamp + "\n" + secret`
 * and the message is EMPTY. DingTalk does the reverse; swapping them is the common bug.
 */
export function feishuSign(timestampSeconds: number, secret: string): string {
  return createHmac('sha256', `${timestampSeconds}\n${secret}`).update('').digest('base64');
}

export function formatFeishu(input: Message, config: FeishuConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  // Agent text goes into plain_text elements: no markdown, no <at> tags, so it cannot ping anyone.
  const elements: unknown[] = [{ tag: 'div', text: { tag: 'plain_text', content: feishuText(msg) } }];
  if (msg.mention && config.mention_open_id) {
    elements.push({ tag: 'markdown', content: `<at id=${config.mention_open_id}></at>` });
  }
  if (msg.actions) {
    elements.push({
      tag: 'action',
      actions: [
        button(l.approve, 'primary', msg.actions.approveUrl),
        button(l.reject, 'danger', msg.actions.rejectUrl),
        button(l.open, 'default', msg.actions.pageUrl),
      ],
    });
  }
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

/** The main text; the approval links travel as buttons. */
export function feishuText(msg: Message): string {
  return plainText(msg, FEISHU_TEXT_MAX_BYTES, 'bytes', { headline: false, links: false });
}

// Link buttons: opening one is a GET, which shows the confirmation page and never decides by itself.
function button(text: string, type: 'primary' | 'danger' | 'default', url: string) {
  return { tag: 'button', text: { tag: 'plain_text', content: text }, type, url };
}
