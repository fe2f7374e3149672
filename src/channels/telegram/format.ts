import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message } from '../../notify/port.js';
import { envName, httpUrl, JSON_HEADERS, requireSecret } from '../http.js';
import { labels, plainText, sanitize } from '../text.js';

/** The Bot API server; overridable for a local Bot API server and for tests. */
export const TELEGRAM_API_URL = 'https://api.telegram.org';

export const telegramConfig = z.strictObject({
  type: z.literal('telegram'),
  token_env: envName,
  /** A chat id (`-100…` for supergroups) or `@channelusername`. */
  chat_id: z.union([z.number().int(), z.string().regex(/^(-?\d+|@[A-Za-z0-9_]{5,32})$/)]),
  message_thread_id: z.number().int().positive().optional(),
  api_url: httpUrl.optional(),
  /** Username (without @) of the owner, mentioned on critical messages only. */
  mention_username: z
    .string()
    .regex(/^[A-Za-z0-9_]{5,32}$/)
    .optional(),
});
export type TelegramConfig = z.infer<typeof telegramConfig>;

/** sendMessage text is 1-4096 characters after entity parsing. */
export const TELEGRAM_TEXT_MAX_CHARS = 4096;

/** callback_data is 1-64 bytes: `sb:approve:apr_…` (41 bytes) fits; the gateway verifies the click by the webhook secret token. */
export const callbackData = (decision: 'approve' | 'reject', approvalId: string) =>
  `sb:${decision}:${approvalId}`;

// `@name` in plain text becomes a mention entity and pings; a zero-width space after the @ keeps
// the text readable and silent. Only the configured owner is mentioned, and only when asked.
const silence = (text: string) => text.replace(/@(?=[A-Za-z0-9_])/g, '@\u200b');

export function formatTelegram(input: Message, config: TelegramConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const mention = msg.mention && config.mention_username ? `@${config.mention_username}\n` : '';
  // No parse_mode: the agent's text is shown as it is, never interpreted as markup.
  const text =
    mention +
    silence(
      plainText(msg, TELEGRAM_TEXT_MAX_CHARS - mention.length, 'chars', {
        links: !msg.actions,
        reply: false,
      }),
    );
  const body: Record<string, unknown> = {
    chat_id: config.chat_id,
    text,
    // A preview is a GET by Telegram's servers; it cannot decide, but nothing should fetch approval links unasked.
    link_preview_options: { is_disabled: true },
  };
  if (config.message_thread_id !== undefined) body['message_thread_id'] = config.message_thread_id;
  const keyboard: unknown[][] = [];
  if (msg.actions) {
    keyboard.push(
      [
        { text: l.approve, callback_data: callbackData('approve', msg.actions.approvalId) },
        { text: l.reject, callback_data: callbackData('reject', msg.actions.approvalId) },
      ],
      [{ text: l.open, url: msg.actions.pageUrl }],
    );
  }
  // The reply page; a Telegram reply to this message works too when the callbacks route takes messages.
  if (msg.reply) keyboard.push([{ text: l.reply, url: msg.reply.url }]);
  if (keyboard.length > 0) body['reply_markup'] = { inline_keyboard: keyboard };
  const token = requireSecret(ctx, config.token_env);
  const api = (config.api_url ?? TELEGRAM_API_URL).replace(/\/+$/, '');
  return { url: `${api}/bot${token}/sendMessage`, headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}
