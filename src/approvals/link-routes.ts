import type { Context } from 'hono';
import { AppError } from '../errors/index.js';
import { readBody } from '../kernel/body.js';
import type { App, AppEnv, Principal } from '../kernel/module.js';
import { parseToken } from './links.js';
import { LOCAL_TIME_SCRIPT, PAGE_HEADERS, pageHeadersWithScript } from '../web/page.js';
import { COMMENT_MAX_CHARS, confirmationPage, type NoticeKind, noticePage } from './page.js';
import type { Approvals } from './service.js';
import { effectiveState, toRecord } from './view.js';

/**
 * A form post from the page is the decision and a comment of at most 2000 characters; URL-encoding
 * makes a non-ASCII character up to 9 bytes. Anything larger is not from our page.
 */
const FORM_LIMIT_BYTES = 24 * 1024;
/** The confirmation page runs one script (local time, "in 4 min"): its CSP allows that one by hash. */
const CONFIRMATION_HEADERS = pageHeadersWithScript(LOCAL_TIME_SCRIPT);
/** Links are decided by whoever holds the token; the log records the channel, not a key name. */
const LINK_PRINCIPAL: Principal = { name: 'link', role: 'approver' };

function page(
  c: Context<AppEnv>,
  html: string,
  status: 200 | 400 | 401 | 409 | 410 | 413 | 415,
  headers = PAGE_HEADERS,
): Response {
  return c.body(html, status, headers);
}

const NOTICE_STATUS: Record<NoticeKind, 200 | 400 | 401 | 409 | 410> = {
  approved: 200,
  rejected: 200,
  already_decided: 409,
  expired: 410,
  invalid: 401,
  bad_request: 400,
};

function notice(
  c: Context<AppEnv>,
  kind: NoticeKind,
  status: 200 | 400 | 401 | 409 | 410 | 413 | 415 = NOTICE_STATUS[kind],
  detail = '',
): Response {
  return page(c, noticePage(kind, detail), status);
}

interface Posted {
  decision: string | null;
  /** The comment box, trimmed; absent when left empty. */
  comment?: string;
}

async function readDecision(c: Context<AppEnv>): Promise<Posted | undefined> {
  const type = (c.req.header('content-type') ?? '').toLowerCase();
  const bytes = await readBody(c, FORM_LIMIT_BYTES);
  if (bytes.byteLength > 0) {
    if (!type.startsWith('application/x-www-form-urlencoded')) return undefined;
    const form = new URLSearchParams(new TextDecoder().decode(bytes));
    const fromForm = form.get('decision');
    const comment = form.get('comment')?.trim();
    if (fromForm !== null) return { decision: fromForm, ...(comment ? { comment } : {}) };
  }
  // ntfy-style HTTP action buttons POST to approveUrl/rejectUrl without a body.
  return { decision: c.req.query('decision') ?? null };
}

/**
 * `GET /a/{token}` shows what is asked and changes nothing, because chat apps fetch links to build
 * previews; only `POST /a/{token}` (the page's buttons) decides. The token is the credential: no key.
 */
export function linkRoutes(app: App, impl: () => Approvals, now: () => number): void {
  app.get('/a/:token', async (c) => {
    const token = parseToken(c.req.param('token'));
    const row = token ? await impl().rowForToken(token) : undefined;
    if (!row) return notice(c, 'invalid');
    const record = toRecord(row, now());
    if (record.state === 'expired') return notice(c, 'expired');
    // Already decided: a GET still answers 200 with the outcome (a preview or a reload is not an error).
    if (record.state !== 'pending') return notice(c, 'already_decided', 200, `It was ${record.state}.`);
    return page(c, confirmationPage(record, now()), 200, CONFIRMATION_HEADERS);
  });

  app.post('/a/:token', async (c) => {
    const token = parseToken(c.req.param('token'));
    const row = token ? await impl().rowForToken(token) : undefined;
    if (!row) return notice(c, 'invalid');
    let posted: Posted | undefined;
    try {
      posted = await readDecision(c);
    } catch (err) {
      if (err instanceof AppError && err.code === 'payload_too_large') return notice(c, 'bad_request', 413);
      throw err;
    }
    if (posted === undefined) return notice(c, 'bad_request', 415);
    const { decision, comment } = posted;
    if (decision !== 'approve' && decision !== 'reject') return notice(c, 'bad_request');
    if (comment !== undefined && comment.length > COMMENT_MAX_CHARS) {
      return notice(c, 'bad_request', 400, `The comment is over ${COMMENT_MAX_CHARS} characters.`);
    }
    const state = effectiveState(row, now());
    if (state === 'expired') return notice(c, 'expired');
    if (state !== 'pending') return notice(c, 'already_decided', 409, `It was ${state}.`);
    try {
      const decided = await impl().decideVia(row.id, decision, LINK_PRINCIPAL, 'link', comment);
      return notice(c, decided.state === 'approved' ? 'approved' : 'rejected');
    } catch (err) {
      if (err instanceof AppError && err.code === 'already_decided') return notice(c, 'already_decided');
      if (err instanceof AppError && err.code === 'expired') return notice(c, 'expired');
      throw err;
    }
  });
}
