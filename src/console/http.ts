import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { AppError } from '../errors/index.js';
import { bearer, type KeyRing } from '../kernel/auth.js';
import { readBody } from '../kernel/body.js';
import type { AppEnv, Principal, Role } from '../kernel/module.js';
import { PAGE_HEADERS } from '../web/page.js';
import { type ConsoleSession, SESSION_COOKIE, type Sessions, sameSecret } from './sessions.js';

/** What a console handler sees besides the app's variables. */
export interface ConsoleEnv {
  Variables: AppEnv['Variables'] & {
    /** Set when the request came with the session cookie (absent for a bearer-key request). */
    session: ConsoleSession | undefined;
    /** The parsed form of a POST (already CSRF-checked). */
    form: URLSearchParams;
  };
}

export type ConsoleContext = Context<ConsoleEnv>;

/**
 * The console's pages load their script and style from /console/assets only; no inline script or style
 * runs, so text an agent wrote can never execute even if escaping failed somewhere.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const CONSOLE_HEADERS: Record<string, string> = {
  ...PAGE_HEADERS,
  'content-security-policy': CONSOLE_CSP,
  // Not `no-referrer`: under it a browser posts its forms with `Origin: null`, and the origin check
  // below could no longer tell this console's own forms from a sandboxed foreign page.
  'referrer-policy': 'same-origin',
};

/** A console form is a few short fields; a replay of a DLQ group lists up to a thousand ids. */
export const FORM_LIMIT_BYTES = 64 * 1024;

export function html(c: Context, body: string, status = 200): Response {
  return c.body(body, status as 200, CONSOLE_HEADERS);
}

/** A live region the console script fetches to refresh a page in place. */
export function fragment(c: Context, body: string, headers: Record<string, string> = {}): Response {
  return c.body(body, 200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
}

/** A browser asking for a page (not `fetch` from the console script, not a script with a key). */
export function wantsHtml(c: Context): boolean {
  return (
    (c.req.header('accept') ?? '').includes('text/html') && c.req.header('x-requested-with') !== 'console'
  );
}

/** The request's own origin, as a browser would send it in `Origin`. */
function ownOrigin(c: Context): string {
  const url = new URL(c.req.url);
  const host = c.req.header('host') ?? url.host;
  const proto = c.req.header('x-forwarded-proto') === 'https' ? 'https:' : url.protocol;
  return `${proto}//${host}`;
}

/**
 * A POST from another site: its `Origin` says so, or (when the origin is opaque, `null`, or absent)
 * `Sec-Fetch-Site` does. An opaque origin without `Sec-Fetch-Site: same-origin` counts as foreign.
 */
export function crossSite(c: Context): boolean {
  const origin = c.req.header('origin');
  const site = c.req.header('sec-fetch-site');
  if (origin !== undefined && origin !== 'null') return origin !== ownOrigin(c);
  if (origin === 'null') return site !== 'same-origin';
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

/** Reads a url-encoded form with the console's cap; an empty body is an empty form. */
export async function readForm(c: Context): Promise<URLSearchParams> {
  const bytes = await readBody(c as Context<AppEnv>, FORM_LIMIT_BYTES);
  if (bytes.byteLength === 0) return new URLSearchParams();
  const type = (c.req.header('content-type') ?? '').toLowerCase();
  if (!type.startsWith('application/x-www-form-urlencoded'))
    throw new AppError('unsupported_media_type', 'console forms are application/x-www-form-urlencoded');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new AppError('bad_request', 'the form is not UTF-8');
  }
  return new URLSearchParams(text);
}

/**
 * Who is calling, for every console route but sign-in: a session cookie, or a bearer key (scripts;
 * no CSRF token then, as a browser never attaches a bearer header by itself). Agent keys are refused.
 * A POST (any unsafe method) with a cookie must come from this origin and carry the session's CSRF
 * token (`x-csrf-token` or the form's `_csrf`); its form is parsed here so no handler can skip the check.
 */
export function consoleAuth(
  sessions: () => Sessions,
  keys: KeyRing,
  roles: readonly Role[],
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    let principal: Principal | undefined;
    let session: ConsoleSession | undefined;
    const token = bearer(c.req.header('authorization'));
    if (token) {
      principal = keys.resolve(token);
      if (!principal) throw new AppError('unauthorized');
    } else {
      session = await sessions().resolve(getCookie(c, SESSION_COOKIE));
      principal = session?.principal;
    }
    if (!principal) {
      if (c.req.method === 'GET' && wantsHtml(c)) {
        const next = encodeURIComponent(new URL(c.req.url).pathname + new URL(c.req.url).search);
        return c.redirect(`/console/login?next=${next}`, 303);
      }
      throw new AppError('unauthorized', 'sign in to the console, or send an approver or admin key');
    }
    if (principal.role === 'agent') throw new AppError('forbidden', 'agent keys cannot use the console');
    if (!roles.includes(principal.role))
      throw new AppError(
        'forbidden',
        `this page needs an ${roles.join(' or ')} key; yours is ${principal.role}`,
      );
    c.set('principal', principal);
    c.set('session', session);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const form = await readForm(c);
      if (session) {
        if (crossSite(c)) throw new AppError('csrf_failed', 'this form was posted from another site');
        const sent = c.req.header('x-csrf-token') ?? form.get('_csrf') ?? '';
        if (!sameSecret(sent, session.csrf)) throw new AppError('csrf_failed');
      }
      form.delete('_csrf');
      c.set('form', form);
    }
    await next();
  };
}

/**
 * The form's fields, checked against what the handler takes: an unknown field is a 400 (a typo never
 * goes unnoticed), a repeated single field too.
 */
export function fields<S extends string, M extends string = never>(
  form: URLSearchParams,
  single: readonly S[],
  many: readonly M[] = [],
): { one: Partial<Record<S, string>>; many: Record<M, string[]> } {
  const one: Partial<Record<S, string>> = {};
  const lists = Object.fromEntries(many.map((m) => [m, [] as string[]])) as Record<M, string[]>;
  for (const [k, v] of form) {
    if ((many as readonly string[]).includes(k)) lists[k as M].push(v);
    else if ((single as readonly string[]).includes(k)) {
      if (one[k as S] !== undefined) throw new AppError('bad_request', `the field ${k} is given twice`);
      one[k as S] = v;
    } else throw new AppError('bad_request', `unknown field ${JSON.stringify(k.slice(0, 40))}`);
  }
  return { one, many: lists };
}
