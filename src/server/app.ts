import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { AppError, errorBody } from '../errors/index.js';
import { newId } from '../envelope/index.js';
import type { App, AppEnv, Module, Services } from '../kernel/module.js';

/**
 * The HTTP app: error mapping, request ids and metrics, then each module's routes. Tested in-process
 * with `app.request()`; `serve.ts` puts it on a socket.
 */
export function createApp(services: Services, modules: Module[]): App {
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

  app.onError((err, c) => {
    if (err instanceof AppError) {
      if (err.status >= 500)
        services.logger.error({ err, requestId: c.get('requestId'), path: c.req.path }, err.message);
      return c.json(errorBody(err), err.status as 400);
    }
    if (err instanceof HTTPException) {
      const mapped =
        err.status === 413 ? new AppError('payload_too_large') : new AppError('bad_request', err.message);
      return c.json(errorBody(mapped), err.status);
    }
    // Internal errors are logged with their context and never leaked: the caller gets the request id.
    services.logger.error(
      { err, requestId: c.get('requestId'), method: c.req.method, path: c.req.path },
      'unhandled error',
    );
    return c.json(
      errorBody(new AppError('internal', `Internal error (request ${c.get('requestId')}).`)),
      500,
    );
  });

  app.notFound((c) =>
    c.json(errorBody(new AppError('not_found', `no route for ${c.req.method} ${c.req.path}`)), 404),
  );

  for (const m of modules) m.routes?.(app, services);
  return app;
}
