import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message } from '../../notify/port.js';
import { exactlyOneUrl, JSON_HEADERS, ONE_URL, resolveUrl, urlOrEnv } from '../http.js';
import { fitText, headline, labels, contextLines, sanitize } from '../text.js';

export const wecomConfig = z
  .strictObject({
    type: z.literal('wecom'),
    /** `https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…`: the key is the only credential (no signature). */
    ...urlOrEnv,
    /** WeCom userid of the owner, mentioned (`<@userid>`) on critical messages only. */
    mention_userid: z
      .string()
      .regex(/^[A-Za-z0-9_.@-]{1,64}$/)
      .optional(),
  })
  .refine(exactlyOneUrl, ONE_URL);
export type WecomConfig = z.infer<typeof wecomConfig>;

/** The group-robot markdown content limit (utf-8 bytes). */
export const WECOM_MARKDOWN_MAX_BYTES = 4096;

// Agent text must not carry WeCom mention tags or font tags of its own.
const neutralize = (text: string) => text.replace(/<@[^>]*>/g, '').replace(/<\/?font[^>]*>/gi, '');

const COLOR = { info: 'info', warn: 'warning', critical: 'warning' } as const;

export function formatWecom(input: Message, config: WecomConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const head = `## ${neutralize(headline(msg))}\n<font color="${COLOR[msg.severity]}">${l.severity[msg.severity]}</font> ${neutralize(msg.summary)}`;
  const tail: string[] = contextLines(msg).map(neutralize);
  if (msg.actions) tail.push(`[${l.open}](${msg.actions.pageUrl})`);
  if (msg.reply) tail.push(`[${l.reply}](${msg.reply.url})`);
  const mention = msg.mention && config.mention_userid ? `\n<@${config.mention_userid}>` : '';
  const room = WECOM_MARKDOWN_MAX_BYTES - Buffer.byteLength(mention);
  const content =
    fitText(head, msg.detail && neutralize(msg.detail), tail.join('\n'), room, 'bytes') + mention;
  const body = { msgtype: 'markdown', markdown: { content } };
  return { url: resolveUrl(config, ctx), headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}
