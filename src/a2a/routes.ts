import type { AgentCard } from '@a2a-js/sdk';
import type { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import type { A2ARequestHandler, JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readBody } from '../kernel/body.js';
import type { App, Services } from '../kernel/module.js';
import { JSONRPC_PATH } from './card.js';
import { loadServerSdk, type ServerSdk } from './sdk.js';
import { KeyUser } from './store.js';
import { AGENT_CARD_PATH, sdkRoot } from './wire.js';

/** JSON-RPC 2.0's own codes; the A2A ones (-32001…) come from the SDK's error mapping. */
export const RPC = { parse: -32700, invalidRequest: -32600, invalidParams: -32602 } as const;

export interface A2ARoutes {
  /** The request handler, built with the SDK's server side on the first call; undefined before start. */
  handler(): Promise<A2ARequestHandler> | undefined;
  card(): AgentCard;
  maxBytes(): number;
}

type Rpc = { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };

function rpcError(id: string | number | null, code: number, message: string): Rpc {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * The JSON-RPC envelope, checked here so each refusal names the field (the SDK folds them all into
 * one "malformed request"): -32700 for JSON that does not parse, -32600 for a request that is not a
 * JSON-RPC 2.0 request, -32602 for params that are not an object.
 */
export function checkEnvelope(
  text: string,
): { ok: true; body: Record<string, unknown> } | { ok: false; error: Rpc } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: rpcError(null, RPC.parse, `Parse error: ${(err as Error).message}`) };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return {
      ok: false,
      error: rpcError(
        null,
        RPC.invalidRequest,
        'Invalid Request: the body must be one JSON-RPC request object (batches are not supported)',
      ),
    };
  const r = body as Record<string, unknown>;
  const id = r.id;
  const validId = id === undefined || id === null || typeof id === 'string' || Number.isInteger(id);
  const echo = validId ? ((id ?? null) as string | number | null) : null;
  if (r.jsonrpc !== '2.0')
    return { ok: false, error: rpcError(echo, RPC.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"') };
  if (!validId)
    return {
      ok: false,
      error: rpcError(null, RPC.invalidRequest, 'Invalid Request: id must be a string, an integer or null'),
    };
  if (typeof r.method !== 'string' || r.method === '')
    return {
      ok: false,
      error: rpcError(echo, RPC.invalidRequest, 'Invalid Request: method must be a non-empty string'),
    };
  if (
    r.params !== undefined &&
    (typeof r.params !== 'object' || r.params === null || Array.isArray(r.params))
  )
    return {
      ok: false,
      error: rpcError(echo, RPC.invalidParams, 'Invalid params: params must be an object'),
    };
  return { ok: true, body: r };
}

export function a2aRoutes(app: App, s: Services, r: A2ARoutes): void {
  app.get(`/${AGENT_CARD_PATH}`, async (c) => c.json((await sdkRoot()).AgentCard.toJSON(r.card()) as object));

  const transports = new WeakMap<
    A2ARequestHandler,
    { v1: JsonRpcTransportHandler; legacy: LegacyJsonRpcTransportHandler }
  >();
  const transportsFor = (h: A2ARequestHandler, { server, compat }: ServerSdk) => {
    let t = transports.get(h);
    if (!t) {
      t = { v1: new server.JsonRpcTransportHandler(h), legacy: new compat.LegacyJsonRpcTransportHandler(h) };
      transports.set(h, t);
    }
    return t;
  };

  app.post(JSONRPC_PATH, requireRole(s.keys, 'agent', 'admin'), async (c) => {
    const building = r.handler();
    if (!building) throw new AppError('not_ready', 'the a2a module has not started');
    const [handler, sdk, root] = await Promise.all([building, loadServerSdk(), sdkRoot()]);
    let bytes: Uint8Array;
    try {
      bytes = await readBody(c, r.maxBytes());
    } catch (err) {
      if ((err as AppError).code !== 'payload_too_large') throw err;
      const msg = `Invalid Request: the request is over the limit of ${r.maxBytes()} bytes (a2a.max_message_bytes)`;
      return c.json(rpcError(null, RPC.invalidRequest, msg), 413);
    }
    const checked = checkEnvelope(new TextDecoder().decode(bytes));
    if (!checked.ok) return c.json(checked.error);
    const body = checked.body;
    const requested = c.req.header(root.A2A_VERSION_HEADER);
    // As the SDK's express handler does: no A2A-Version header means a v0.3 client.
    const legacy = (requested || '0.3') === '0.3';
    const t = transportsFor(handler, sdk);
    const mapError = legacy
      ? sdk.compat.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
      : sdk.server.JsonRpcTransportHandler.mapToJSONRPCError;
    const id = (body.id ?? null) as string | number | null;
    const ctx = new sdk.server.ServerCallContext({
      user: new KeyUser(c.get('principal')),
      requestedExtensions: root.Extensions.parseServiceParameter(c.req.header(root.HTTP_EXTENSION_HEADER)),
      ...(requested ? { requestedVersion: requested } : {}),
    });
    try {
      sdk.server.validateVersion(ctx.requestedVersion, await handler.getAgentCard(), 'JSONRPC');
    } catch (err) {
      return c.json({ jsonrpc: '2.0', id, error: mapError(err) });
    }
    const out = await (legacy ? t.legacy : t.v1).handle(body, ctx);
    if (!(Symbol.asyncIterator in out)) return c.json(out as object);
    const events = out as AsyncGenerator<unknown>;
    // The first event decides the answer: an error before it (an unknown task, a refused skill) is a
    // plain JSON-RPC error, as the SDK's own transport answers it.
    let first: IteratorResult<unknown>;
    try {
      first = await events.next();
    } catch (err) {
      return c.json({ jsonrpc: '2.0', id, error: mapError(err) });
    }
    return sse(first, events, (err) => ({ jsonrpc: '2.0', id, error: mapError(err) }), s, root);
  });
}

/**
 * An SSE answer that ends when the stream does; a client that goes away ends the generator, which
 * detaches it from the task's bus (the task goes on).
 */
function sse(
  first: IteratorResult<unknown>,
  events: AsyncGenerator<unknown>,
  onError: (e: unknown) => unknown,
  s: Services,
  { formatSSEEvent, formatSSEErrorEvent, SSE_HEADERS }: Awaited<ReturnType<typeof sdkRoot>>,
): Response {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(encoder.encode(formatSSEEvent(first.value)));
    },
    async pull(controller) {
      try {
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(formatSSEEvent(next.value)));
      } catch (err) {
        s.logger.warn({ err: (err as Error).message }, 'an A2A stream ended with an error');
        controller.enqueue(encoder.encode(formatSSEErrorEvent(onError(err))));
        controller.close();
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
  return new Response(stream, { status: 200, headers: { ...SSE_HEADERS } });
}
