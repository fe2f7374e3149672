import { streamSSE } from 'hono/streaming';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { parseJsonBytes, readBody, requireJsonContentType } from '../kernel/body.js';
import type { App, Deps } from '../kernel/module.js';
import { reportContext } from '../notify/context.js';
import type { ReachService, TouchCaller } from './port.js';
import { parseTouchRequest, REQUEST_ID, TOUCH_ERRORS, type TouchResponse } from './protocol.js';

/**
 * The HTTP surface (CONTRACT.md): `GET /v1/tools` (the registry, the seed's `get_schemas()`),
 * `POST /v1/touch` (a TouchRequest in, a TouchResponse out; `channel: stream` answers Server-Sent
 * Events), `GET /v1/touch/{request_id}` (an async touch's state and result; reads only). The caller
 * is the key, and the task is the key's or `X-Switchboard-Task`'s, never the body's.
 */

/** The HTTP status of a touch answer: 200 done, 202 accepted (async) or waiting, else the code's. */
export function httpStatus(r: TouchResponse): number {
  if (r.error) return TOUCH_ERRORS[r.error.code].status;
  if (r.status === 'running' || r.status === 'awaiting_approval') return 202;
  return 200;
}

/** Seconds a CONCURRENCY_LIMIT caller should wait: a slot frees as soon as one call finishes. */
const RETRY_AFTER_SECONDS = 1;

export function reachRoutes(app: App, deps: Deps, reach: () => ReachService | undefined): void {
  const service = (): ReachService => {
    const r = reach();
    if (!r) throw new AppError('not_ready', 'the reach module has not started');
    return r;
  };
  const callerOf = (c: Parameters<typeof reportContext>[0]): TouchCaller => {
    const ctx = reportContext(c);
    return {
      principal: ctx.principal,
      task_id: ctx.task_id,
      ...(ctx.session_id ? { session_id: ctx.session_id } : {}),
    };
  };

  app.get('/v1/tools', requireRole(deps.keys, 'agent', 'admin'), (c) => c.json({ tools: service().list() }));

  app.post('/v1/touch', requireRole(deps.keys, 'agent', 'admin'), async (c) => {
    const caller = callerOf(c);
    requireJsonContentType(c);
    const bytes = await readBody(c, deps.config.server.body_limit_bytes);
    // The door's rules (kernel/body.ts): UTF-8, JSON, depth ≤ 64, nothing RFC 8785 cannot hash.
    const value = parseJsonBytes(bytes);
    const parsed = parseTouchRequest(value);
    if (!parsed.ok) return c.json(parsed.response, 400);
    const svc = service();
    if (parsed.req.channel === 'stream') {
      c.header('Cache-Control', 'no-store');
      return streamSSE(c, async (sse) => {
        let seq = 0;
        // Partials are written in order; the result waits for the ones already handed to the socket.
        let chain: Promise<unknown> = Promise.resolve();
        const result = await svc.touch(parsed.req, caller, {
          onPartial: (text) => {
            const id = String(++seq);
            chain = chain.then(() =>
              sse.writeSSE({ event: 'partial', id, data: JSON.stringify({ seq, text }) }),
            );
          },
        });
        await chain.catch(() => {});
        await sse.writeSSE({ event: 'result', id: String(++seq), data: JSON.stringify(result) });
      });
    }
    const result = await svc.touch(parsed.req, caller);
    if (result.error?.code === 'CONCURRENCY_LIMIT') c.header('Retry-After', String(RETRY_AFTER_SECONDS));
    return c.json(result, httpStatus(result) as 200);
  });

  app.get('/v1/touch/:id', requireRole(deps.keys, 'agent', 'admin'), async (c) => {
    const id = c.req.param('id');
    if (!REQUEST_ID.test(id)) throw new AppError('not_found', 'no such touch');
    const r = await service().status(c.get('principal').name, id);
    if (!r) throw new AppError('not_found', `no touch ${id} by this key`);
    c.header('Cache-Control', 'no-store');
    return c.json(r);
  });
}
