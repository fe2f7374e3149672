import { z } from 'zod';
import type { FormatContext, SmtpMail } from '../channel.js';
import type { Message } from '../../notify/port.js';
import { envName } from '../http.js';
import { headline, labels, plainText, sanitize } from '../text.js';

export const emailConfig = z
  .strictObject({
    type: z.literal('email'),
    host: z.string().min(1),
    /** 587 (submission with STARTTLS) is the usual port; 25 for a local relay. */
    port: z.number().int().min(1).max(65535).optional(),
    starttls: z.enum(['never', 'if-offered', 'required']).optional(),
    username_env: envName.optional(),
    password_env: envName.optional(),
    from: z.email(),
    to: z.array(z.email()).min(1),
    helo: z
      .string()
      .regex(/^[A-Za-z0-9.-]+$/)
      .optional(),
  })
  .refine((c) => (c.username_env === undefined) === (c.password_env === undefined), {
    message: 'set both username_env and password_env, or neither',
  });
export type EmailConfig = z.infer<typeof emailConfig>;

export const SMTP_DEFAULT_PORT = 587;
/** A notification, not a log: the full detail is behind the artifact link. */
export const EMAIL_TEXT_MAX_BYTES = 64 * 1024;

/** RFC 2047 encoded-words, each ≤ 75 characters, folded: a subject with CR/LF cannot inject headers. */
export function encodeHeader(text: string): string {
  const words: string[] = [];
  let chunk = '';
  for (const ch of text) {
    // 45 bytes of UTF-8 → 60 base64 characters → 72 with the =?UTF-8?B?…?= wrapper.
    if (Buffer.byteLength(chunk + ch, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk !== '' || words.length === 0) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join('\r\n ');
}

const base64Lines = (text: string) =>
  (
    Buffer.from(text, 'utf8')
      .toString('base64')
      .match(/.{1,76}/g) ?? []
  ).join('\r\n');

/** RFC 5322 date, e.g. `Sun, 29 Nov 2026 12:00:00 +0000`. */
const rfc5322Date = (ms: number) => new Date(ms).toUTCString().replace('GMT', '+0000');

export function formatEmail(input: Message, config: EmailConfig, ctx: FormatContext): SmtpMail {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const subject = `[${l.severity[msg.severity]}] ${headline(msg)}`;
  const domain = config.from.split('@')[1] ?? 'switchboard.invalid';
  const text = plainText(msg, EMAIL_TEXT_MAX_BYTES, 'bytes');
  const headers = [
    `From: <${config.from}>`,
    // Folded, one address a line: RFC 5322 caps a line at 998 characters.
    `To: ${config.to.map((t) => `<${t}>`).join(',\r\n ')}`,
    `Subject: ${encodeHeader(subject)}`,
    `Date: ${rfc5322Date(ctx.now)}`,
    // The event id makes the Message-ID stable across retries, so a mail client shows one copy.
    `Message-ID: <${msg.eventId}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    // RFC 3834: no vacation auto-replies to a machine.
    'Auto-Submitted: auto-generated',
  ];
  const mail: SmtpMail = {
    host: config.host,
    port: config.port ?? SMTP_DEFAULT_PORT,
    from: config.from,
    to: [...config.to],
    data: `${headers.join('\r\n')}\r\n\r\n${base64Lines(text)}\r\n`,
    starttls: config.starttls ?? 'if-offered',
    heloName: config.helo ?? 'switchboard.localdomain',
  };
  if (config.username_env && config.password_env) {
    mail.usernameEnv = config.username_env;
    mail.passwordEnv = config.password_env;
  }
  return mail;
}

/** The readable text of a rendered mail (decodes the base64 body); for tests and the audit view. */
export function emailText(mail: SmtpMail): string {
  const body = mail.data.split('\r\n\r\n').slice(1).join('\r\n\r\n');
  return Buffer.from(body.replace(/\r\n/g, ''), 'base64').toString('utf8');
}

/** The decoded subject. */
export function emailSubject(mail: SmtpMail): string {
  const m = /^Subject: ((?:.*)(?:\r\n .*)*)/m.exec(mail.data);
  const words = m?.[1]?.split('\r\n ') ?? [];
  return words
    .map((w) => Buffer.from(w.replace(/^=\?UTF-8\?B\?|\?=$/g, ''), 'base64').toString('utf8'))
    .join('');
}
