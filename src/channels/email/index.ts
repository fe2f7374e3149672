import type { ChannelKind, SendResult, SmtpMail, SmtpReply } from '../channel.js';
import { ChannelConfigError, TargetRefusedError } from '../channel.js';
import { networkError } from '../http.js';
import { EMAIL_TEXT_MAX_BYTES, type EmailConfig, emailConfig, formatEmail } from './format.js';
import { smtpSend } from './smtp.js';
import { prefix } from '../../text/index.js';

/** RFC 5321: 2xx accepted, 4xx transient (greylisting, mailbox busy), 5xx permanent. */
export function parseSmtpResult(reply: SmtpReply): SendResult {
  const text = `SMTP ${reply.code}: ${prefix(reply.text.replace(/\s+/g, ' '), 200)}`;
  if (reply.code >= 200 && reply.code < 300) {
    const queued = /queued as ([A-Za-z0-9]+)/i.exec(reply.text)?.[1];
    return queued ? { kind: 'ok', providerId: queued } : { kind: 'ok' };
  }
  if (reply.code >= 400 && reply.code < 500) return { kind: 'retry', error: text };
  return { kind: 'dead', reason: text };
}

export const email: ChannelKind<EmailConfig, SmtpMail, SmtpReply> = {
  type: 'email',
  configSchema: emailConfig,
  buttons: false,
  maxLength: EMAIL_TEXT_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatEmail,
  parseResult: parseSmtpResult,
  async send(msg, config, deps) {
    let mail: SmtpMail;
    try {
      mail = formatEmail(msg, config, { now: deps.now(), secret: deps.secret });
    } catch (err) {
      if (err instanceof ChannelConfigError) return { kind: 'dead', reason: err.message };
      throw err;
    }
    try {
      return parseSmtpResult(await (deps.smtp ?? smtpSend)(mail, deps.secret));
    } catch (err) {
      if (err instanceof TargetRefusedError) return { kind: 'dead', reason: err.message };
      return { kind: 'retry', error: networkError(err) };
    }
  },
};

export { emailConfig, formatEmail, type EmailConfig };
export { createSmtpTransport, dotStuff, guardedSmtp, type SmtpOptions, smtpSend } from './smtp.js';
