import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { AppError } from '../errors/index.js';
import { bearer, requireRole } from '../kernel/auth.js';
import { kernelPort } from '../kernel/kernel.js';
import { defineModule, type AppEnv } from '../kernel/module.js';
import { activityLogSubscriber } from './activity-log.js';
import { openApiDocument } from './openapi.js';
import { outboxRoutes } from './outbox-routes.js';

const READY_TIMEOUT_MS = 2000;
/** The API's version in its OpenAPI document: the package's. */
const API_VERSION = '0.1.0';
/** What services.ts and config/load.ts call a config that came from no file. */
const DEFAULTS_SOURCE = 'built-in defaults';

/** Health, readiness, metrics and the event feed: the routes every deployment has. */
export function coreModule() {
  return defineModule({
    name: 'core',
    requires: { kernel: kernelPort },
    subscribers: (s) => [activityLogSubscriber(s.logger)],
    routes(app, s) {
      outboxRoutes(app, s);
      app.get('/healthz', (c) => c.json({ status: 'ok' }));

      // Built on the first request, once every module has mounted its routes.
      let openapi: Record<string, unknown> | undefined;
      app.get('/v1/openapi.json', (c) => {
        openapi ??= openApiDocument(app.routes, API_VERSION);
        return c.json(openapi);
      });

      app.get('/readyz', async (c) => {
        const problems: string[] = [];
        try {
          await withTimeout(s.db.query({ text: 'SELECT 1 AS ok' }), READY_TIMEOUT_MS);
        } catch {
          problems.push('store unreachable');
        }
        problems.push(...s.kernel.notReady());
        if (problems.length > 0) {
          return c.json(
            { status: 'not_ready', problems, error: { code: 'not_ready', message: problems.join('; ') } },
            503,
          );
        }
        // Where the config lives is a fact about this machine: anyone learns only whether there is a file;
        // an admin key also gets the path (server.test.ts).
        const fromFile = s.configSource !== DEFAULTS_SOURCE;
        const degraded = s.kernel.degraded();
        const token = bearer(c.req.header('authorization'));
        const admin = token !== undefined && s.keys.resolve(token)?.role === 'admin';
        return c.json({
          status: 'ready',
          store: s.db.dialect,
          config: fromFile ? 'file' : 'defaults',
          ...(admin && fromFile ? { config_path: s.configSource } : {}),
          ...(degraded.length > 0 ? { degraded } : {}),
        });
      });

      app.get('/metrics', async (c) => {
        if (!s.config.server.metrics_public && !isLoopback(c)) {
          const token = bearer(c.req.header('authorization'));
          const principal = token ? s.keys.resolve(token) : undefined;
          if (!principal)
            throw new AppError('unauthorized', 'metrics are served to loopback callers or an admin key');
          if (principal.role !== 'admin') throw new AppError('forbidden', 'metrics need an admin key');
        }
        const pending = await s.log.outboxDepth().catch(() => undefined);
        if (pending !== undefined) s.metrics.outboxDepth.set(pending);
        return c.body(await s.metrics.registry.metrics(), 200, {
          'content-type': s.metrics.registry.contentType,
        });
      });

      app.get('/v1/events', requireRole(s.keys, 'admin'), async (c) => {
        const after = c.req.query('after');
        const limit = c.req.query('limit');
        if (after !== undefined && !/^\d+$/.test(after))
          throw new AppError('bad_request', '`after` is the seq of the last event you have (a whole number)');
        if (limit !== undefined && !/^\d+$/.test(limit))
          throw new AppError('bad_request', '`limit` is a whole number up to 1000');
        const events = await s.log.list({
          ...(c.req.query('correlation_id') ? { correlationId: c.req.query('correlation_id')! } : {}),
          ...(c.req.query('task_id') ? { taskId: c.req.query('task_id')! } : {}),
          ...(c.req.query('type') ? { type: c.req.query('type')! } : {}),
          ...(after ? { afterSeq: Number(after) } : {}),
          limit: limit ? Number(limit) : 100,
        });
        return c.json({
          events: events.map((e) => ({ seq: e.seq, ...e.envelope })),
          next_after: events.at(-1)?.seq ?? (after ? Number(after) : 0),
        });
      });
    },
  });
}

function isLoopback(c: Context<AppEnv>): boolean {
  try {
    const addr = getConnInfo(c).remote.address ?? '';
    return addr === '127.0.0.1' || addr === '::1' || addr.startsWith('127.') || addr === '::ffff:127.0.0.1';
  } catch {
    // app.request() in tests has no socket: treat as in-process, i.e. loopback.
    return true;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
