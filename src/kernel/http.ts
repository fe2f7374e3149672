import { HTTPException } from 'hono/http-exception';
import { CanonicalJsonError, JSON_PROBLEM_CODE } from '../envelope/index.js';
import { AppError, errorBody } from '../errors/index.js';
import type { App, Services } from './module.js';

/**
 * The error catalogue's HTTP mapping, for every route of every module: an AppError answers its own
 * status and code; Hono's own exceptions (a body over the limit, a malformed request) map to the
 * catalogue; anything else is logged with its context and answered as `internal` with the request id,
 * never leaked.
 */
export function mapErrors(app: App, services: Pick<Services, 'logger'>): void {
  app.onError((err, c) => {
    if (err instanceof AppError) {
      if (err.status >= 500)
        services.logger.error({ err, requestId: c.get('requestId'), path: c.req.path }, err.message);
      return c.json(errorBody(err), err.status as 400);
    }
    if (err instanceof CanonicalJsonError) {
      // The net under the door checks (envelope/json.ts): input that reached an event unhashable is
      // the sender's, so a 400 naming it, never a 500. Logged, because the door should have caught it.
      services.logger.warn(
        { requestId: c.get('requestId'), path: c.req.path, problem: err.problem },
        err.message,
      );
      const mapped = new AppError(JSON_PROBLEM_CODE[err.problem.kind], err.message);
      return c.json(errorBody(mapped), 400);
    }
    if (err instanceof HTTPException) {
      const mapped =
        err.status === 413 ? new AppError('payload_too_large') : new AppError('bad_request', err.message);
      return c.json(errorBody(mapped), err.status);
    }
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
}
