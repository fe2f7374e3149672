import { type Context, Hono } from 'hono';
import { newId } from '../envelope/index.js';
import { errorBody } from '../errors/index.js';
import { drainUnread } from '../kernel/body.js';
import { mapErrors } from '../kernel/http.js';
import type { Kernel } from '../kernel/kernel.js';
import type { App, AppEnv, Services } from '../kernel/module.js';
import { type HostPolicy, hostPolicy } from '../kernel/origin.js';
import { serverSpan } from '../trace/span.js';

/**
 * The HTTP app: request ids and metrics, Host/Origin validation, the error catalogue's mapping, then
 * each module's routes; after every answer, a body the route left unread is drained (or the answer
 * says `connection: close`), so the next request on the connection is never lost. Tested in-process
 * with `app.request()`; `serve.ts` puts it on a socket.
 */
export function createApp(services: Services, kernel: Kernel): App {
  const app = new Hono<AppEnv>();
  const policy = hostPolicyOf(services);

  // One trace per request, a child of the caller's `traceparent` when it sent one (docs/scale.md).
  app.use('*', (c, next) =>
    serverSpan(
      c.req.method,
      { traceparent: c.req.header('traceparent') ?? '', tracestate: c.req.header('tracestate') ?? '' },
      { 'http.request.method': c.req.method, 'url.path': c.req.path },
      async (span) => {
        await next();
        span?.updateName(`${c.req.method} ${c.req.routePath || 'unmatched'}`);
        span?.setAttributes({
          'http.route': c.req.routePath || 'unmatched',
          'http.response.status_code': c.res.status,
        });
      },
    ),
  );

  app.use('*', async (c, next) => {
    const requestId = c.req.header('x-request-id')?.slice(0, 64) || newId('correlation').slice(4);
    c.set('requestId', requestId);
    // Before the route answers, so the answer is built with it: set afterwards, Hono copies a
    // finished answer into a new Response and its body through a web stream (a quarter of a
    // /healthz request's CPU). The check after next() covers a route that returns its own Response.
    c.header('x-request-id', requestId);
    const started = performance.now();
    const refused = policy().check(c.req.header('host'), c.req.header('origin'));
    if (refused) c.res = c.json(errorBody(refused), refused.status as 403);
    else await next();
    await drainUnread(c);
    if (c.get('closeConnection')) closeConnection(c);
    ensureHeader(c, 'x-request-id', requestId);
    const route = c.req.routePath || 'unmatched';
    services.metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) });
    services.metrics.httpDuration.observe(
      { method: c.req.method, route },
      (performance.now() - started) / 1000,
    );
  });

  mapErrors(app, services);
  kernel.routes(app);
  return app;
}

/** Built again only when the server section changes (a test sets public_url after the port is known). */
function hostPolicyOf(services: Services): () => HostPolicy {
  let key = '';
  let policy: HostPolicy | undefined;
  return () => {
    const { host, public_url, allowed_hosts } = services.config.server;
    const now = JSON.stringify([host, public_url, allowed_hosts]);
    if (!policy || now !== key) {
      policy = hostPolicy({ host, public_url, allowed_hosts });
      key = now;
    }
    return policy;
  };
}

/** Sets a header on the answer in place when it is missing; a Response with immutable headers is copied. */
function ensureHeader(c: Context<AppEnv>, name: string, value: string): void {
  const headers = c.res.headers;
  if (headers.get(name) === value) return;
  try {
    headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

function closeConnection(c: { res: Response }): void {
  try {
    c.res.headers.set('connection', 'close');
  } catch {
    // Some responses have immutable headers: copy it.
    const res = new Response(c.res.body, c.res);
    res.headers.set('connection', 'close');
    c.res = res;
  }
}
