import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { AppError } from '../../errors/index.js';
import { crossSite, html, readForm } from '../http.js';
import { KEEPALIVE_MS, type LiveClient, REFRESH_SECONDS, type Topic } from '../live.js';
import type { ConsoleCtx } from '../module.js';
import { LOGIN_COOKIE, randomToken, SESSION_COOKIE, sameSecret } from '../sessions.js';
import { bareLayout, escapeHtml } from '../shell.js';
import { APPROVER_OR_ADMIN, type ConsoleRouter, guard, pendingCount } from './common.js';

/** The sign-in form's token lives ten minutes: long enough to find and paste a key. */
const LOGIN_TOKEN_SECONDS = 600;
/** Where a sign-in may return to: a console path, never another site (`//evil`, `/\\evil`). */
const NEXT_PATH = /^\/console\/[A-Za-z0-9/_.?=&%-]*$/;

/** Secure cookies when the browser reached us over HTTPS (directly or through a proxy that says so). */
function secure(c: Context, publicUrl: string | undefined): boolean {
  return (
    new URL(c.req.url).protocol === 'https:' ||
    c.req.header('x-forwarded-proto') === 'https' ||
    (publicUrl?.startsWith('https:') ?? false)
  );
}

function loginPage(token: string, next: string, problem?: string): string {
  const error = problem ? `<p class="flash bad" role="alert">${escapeHtml(problem)}</p>` : '';
  return bareLayout(
    'Sign in',
    `${error}<form class="login" method="post" action="/console/login">
<input type="hidden" name="_csrf" value="${escapeHtml(token)}">
<input type="hidden" name="next" value="${escapeHtml(next)}">
<label for="key">Approver or admin key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
<p class="mute">The key is checked once and never stored; the session lasts until you sign out or it expires. Agent keys cannot sign in.</p>`,
  );
}

export function authPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const { deps } = ctx;
  const publicUrl = () => deps.config.server.public_url ?? undefined;

  const showLogin = (c: Context, next: string, status: number, problem?: string) => {
    const token = randomToken(24);
    setCookie(c, LOGIN_COOKIE, token, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/console/login',
      maxAge: LOGIN_TOKEN_SECONDS,
      secure: secure(c, publicUrl()),
    });
    return html(c, loginPage(token, next, problem), status);
  };

  r.get('/console/login', async (c) => {
    const next = c.req.query('next');
    return showLogin(c, next && NEXT_PATH.test(next) ? next : '/console/', 200);
  });

  r.post('/console/login', async (c) => {
    if (crossSite(c)) throw new AppError('csrf_failed', 'the sign-in form was posted from another site');
    const form = await readForm(c);
    const expected = getCookie(c, LOGIN_COOKIE) ?? '';
    const sent = form.get('_csrf') ?? '';
    if (!expected || !sameSecret(sent, expected))
      throw new AppError('csrf_failed', 'reload the sign-in page and try again');
    const key = form.get('key') ?? '';
    const nextRaw = form.get('next') ?? '/console/';
    const next = NEXT_PATH.test(nextRaw) ? nextRaw : '/console/';
    if (key.length === 0 || key.length > 1024) return showLogin(c, next, 400, 'Paste a key.');
    const result = await ctx.sessions().signIn(key);
    if (!result.ok) {
      const text =
        result.reason === 'agent_key'
          ? 'Agent keys cannot sign in to the console; use an approver or admin key.'
          : 'That is not a key this gateway knows.';
      return showLogin(c, next, result.reason === 'agent_key' ? 403 : 401, text);
    }
    deleteCookie(c, LOGIN_COOKIE, { path: '/console/login' });
    setCookie(c, SESSION_COOKIE, result.token, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/console',
      maxAge: deps.config.console.session_ttl_seconds,
      secure: secure(c, publicUrl()),
    });
    deps.logger.info({ principal: result.session.principal.name }, 'console: signed in');
    return c.redirect(next, 303);
  });

  r.post('/console/logout', guard(ctx, APPROVER_OR_ADMIN), async (c) => {
    const id = await ctx.sessions().signOut(getCookie(c, SESSION_COOKIE));
    if (id) ctx.hub.closeSession(id);
    deleteCookie(c, SESSION_COOKIE, { path: '/console' });
    return c.redirect('/console/login', 303);
  });

  /** The pending count, for pages other than the inbox (the badge and the tab title). */
  r.get('/console/approvals/count', guard(ctx, APPROVER_OR_ADMIN), async (c) =>
    c.json({ pending: await pendingCount(ctx) }, 200, { 'cache-control': 'no-store' }),
  );

  r.get('/console/live', guard(ctx, APPROVER_OR_ADMIN), (c) => {
    const principal = c.get('principal');
    const session = c.get('session');
    const enc = new TextEncoder();
    let client: LiveClient | undefined;
    let full = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        let closed = false;
        const write = (text: string) => {
          if (closed) return;
          try {
            controller.enqueue(enc.encode(text));
          } catch {
            close();
          }
        };
        const timers: NodeJS.Timeout[] = [];
        const close = () => {
          if (closed) return;
          closed = true;
          for (const t of timers) clearTimeout(t);
          if (client) ctx.hub.remove(client);
          try {
            controller.close();
          } catch {
            // already closed by the client going away
          }
        };
        client = {
          role: principal.role,
          sessionId: session?.id,
          send: (topic: Topic, data: string) => write(`event: ${topic}\ndata: ${data}\n\n`),
          close,
        };
        if (!ctx.hub.add(client)) {
          full = true;
          closed = true;
          controller.close();
          return;
        }
        const keepalive = setInterval(() => write(': keepalive\n\n'), KEEPALIVE_MS);
        keepalive.unref();
        timers.push(keepalive);
        // A stream outlives no session: at its expiry the browser reconnects and is sent to sign in.
        if (session) {
          const end = setTimeout(close, Math.max(0, session.expiresAt - deps.now()));
          end.unref();
          timers.push(end);
        }
        c.req.raw.signal.addEventListener('abort', close, { once: true });
        write(`retry: 3000\nevent: hello\ndata: ${JSON.stringify({ refresh_seconds: REFRESH_SECONDS })}\n\n`);
      },
      cancel() {
        client?.close();
      },
    });
    if (full) throw new AppError('rate_limited', 'too many live connections to this gateway; reload later');
    return new Response(stream, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
      },
    });
  });
}
