import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message, Severity } from '../../notify/port.js';
import { exactlyOneUrl, JSON_HEADERS, ONE_URL, resolveUrl, urlOrEnv } from '../http.js';
import { contextLines, fitText, headline, labels, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

export const discordConfig = z
  .strictObject({
    type: z.literal('discord'),
    /** `https://discord.com/api/webhooks/{id}/{token}`; the token is the credential. */
    ...urlOrEnv,
    thread_id: z.string().regex(/^\d+$/).optional(),
    username: z.string().min(1).max(80).optional(),
    /** Discord user id (snowflake) of the owner, mentioned on critical messages only. */
    mention_user_id: z
      .string()
      .regex(/^\d{5,25}$/)
      .optional(),
  })
  .refine(exactlyOneUrl, ONE_URL);
export type DiscordConfig = z.infer<typeof discordConfig>;

/** Embed description limit (the whole embed is capped at 6000; title and footer stay well inside). */
export const DISCORD_DESCRIPTION_MAX_CHARS = 4096;
const TITLE_MAX = 256;

const COLOR: Record<Severity, number> = { info: 0x3b82f6, warn: 0xf59e0b, critical: 0xdc2626 };

export function formatDiscord(input: Message, config: DiscordConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const tail = [...contextLines(msg)];
  // A plain webhook cannot carry components (they need an application-owned webhook): links instead.
  if (msg.actions) tail.push(`[${l.open}](${msg.actions.pageUrl})`);
  if (msg.reply) tail.push(`[${l.reply}](${msg.reply.url})`);
  const embed: Record<string, unknown> = {
    title: truncate(headline(msg), TITLE_MAX, 'chars'),
    description: fitText(msg.summary, msg.detail, tail.join('\n'), DISCORD_DESCRIPTION_MAX_CHARS, 'chars'),
    color: COLOR[msg.severity],
    footer: { text: `${l.severity[msg.severity]} · ${msg.eventId}` },
  };
  const link = msg.actions?.pageUrl ?? msg.artifact;
  if (link) embed['url'] = link;
  const mention = msg.mention === true && config.mention_user_id !== undefined;
  const body: Record<string, unknown> = {
    embeds: [embed],
    // Nothing in the text may ping anyone; only the configured owner, and only when asked.
    allowed_mentions: { parse: [], users: mention ? [config.mention_user_id] : [] },
  };
  if (mention) body['content'] = `<@${config.mention_user_id}>`;
  if (config.username) body['username'] = config.username;
  const url = new URL(resolveUrl(config, ctx));
  // wait=true makes Discord answer with the created message, so success is confirmed, not assumed.
  url.searchParams.set('wait', 'true');
  if (config.thread_id) url.searchParams.set('thread_id', config.thread_id);
  return { url: url.toString(), headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}
