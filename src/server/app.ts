import { Hono } from 'hono';
import { newId } from '../envelope/index.js';
import { mapErrors } from '../kernel/http.js';
import type { Kernel } from '../kernel/kernel.js';
import type { App, AppEnv, Services } from '../kernel/module.js';

/**
 * The HTTP app: request ids and metrics, the error catalogue's mapping, then each module's routes.
 * Tested in-process with `app.request()`; `serve.ts` puts it on a socket.
 */
export function createApp(services: Services, kernel: Kernel): App {
  const app = new Hono<AppEnv>();

  app.use('*', async (c, next) => {
    const requestId = c.req.header('x-request-id')?.slice(0, 64) || newId('correlation').slice(4);
    c.set('requestId', requestId);
    const started = performance.now();
    await next();
    c.header('x-request-id', requestId);
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
