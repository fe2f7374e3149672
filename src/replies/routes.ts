import type { Context } from 'hono';
import { AppError } from '../errors/index.js';
import { readBody } from '../kernel/body.js';
import type { App, AppEnv } from '../kernel/module.js';
import type { RepliesDeps } from './module.js';
import { MAX_RESUME_MESSAGE_CHARS } from '../tasks/routes.js';
import { PAGE_HEADERS } from '../web/page.js';
import { type ReplyNotice, replyNotice, replyPage } from './page.js';
import type { Replies } from './service.js';
import { verifyReply } from './token.js';

/**
 * A form post carries one field of at most MAX_RESUME_MESSAGE_CHARS characters; percent-encoding can
 * triple a character's bytes (and a CJK character is three bytes before that), so the byte limit is generous.
 */
export const REPLY_FORM_LIMIT_BYTES = MAX_RESUME_MESSAGE_CHARS * 9 + 1024;

type Status = 200 | 400 | 401 | 409 | 410 | 413 | 415;

const NOTICE_STATUS: Record<ReplyNotice, Status> = {
  resumed: 200,
  refused: 409,
  used: 409,
  expired: 410,
  invalid: 401,
  bad_request: 400,
  too_large: 413,
};

function page(c: Context<AppEnv>, html: string, status: Status): Response {
  return c.body(html, status, PAGE_HEADERS);
}

function notice(c: Context<AppEnv>, kind: ReplyNotice, detail = '', status = NOTICE_STATUS[kind]): Response {
  return page(c, replyNotice(kind, detail), status);
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/** The reply text from the page's form; `undefined` when the request is not the page's form. */
async function readMessage(c: Context<AppEnv>): Promise<string | undefined> {
  if (!FORM_TYPE.test(c.req.header('content-type') ?? '')) return undefined;
  const bytes = await readBody(c, REPLY_FORM_LIMIT_BYTES);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return '';
  }
  return new URLSearchParams(text).get('message') ?? '';
}

/**
 * `GET /r/{token}` shows the reply form and changes nothing (chat apps fetch links for previews);
 * only `POST /r/{token}` (the form) resumes the task. The signed token is the credential: no key.
 */
export function replyRoutes(
  app: App,
  services: RepliesDeps,
  replies: () => Replies,
  key: () => Uint8Array,
): void {
  app.get('/r/:token', async (c) => {
    const token = verifyReply(key(), c.req.param('token'));
    if (!token) return notice(c, 'invalid');
    if (services.now() >= token.expires_at) return notice(c, 'expired');
    // A reload of a used link is not an error: it says what happened, with 200.
    if (await replies().used(`link:${token.nonce}`)) return notice(c, 'used', '', 200);
    const task = await services.tasks?.get(token.task_id);
    return page(
      c,
      replyPage({
        id: token.task_id,
        title: task?.title ?? token.task_id,
        expires_at: new Date(token.expires_at).toISOString(),
        max_chars: MAX_RESUME_MESSAGE_CHARS,
      }),
      200,
    );
  });

  app.post('/r/:token', async (c) => {
    const token = verifyReply(key(), c.req.param('token'));
    if (!token) return notice(c, 'invalid');
    let message: string | undefined;
    try {
      message = await readMessage(c);
    } catch (err) {
      if (err instanceof AppError && err.code === 'payload_too_large') return notice(c, 'too_large');
      throw err;
    }
    if (message === undefined) return notice(c, 'bad_request', '', 415);
    if (message.trim() === '') return notice(c, 'bad_request');
    if (message.length > MAX_RESUME_MESSAGE_CHARS) return notice(c, 'too_large');
    const outcome = await replies().resume(token, message, {
      kind: 'link',
      channel: token.channel,
      by: { name: `reply-link:${token.channel}`, role: 'approver' },
      use_id: `link:${token.nonce}`,
    });
    if (outcome.kind === 'refused') return notice(c, 'refused', outcome.reason);
    return notice(c, outcome.kind);
  });
}
