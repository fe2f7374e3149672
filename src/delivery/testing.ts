import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { loopbackOnly } from '../egress/testing.js';
import type { Message } from '../notify/port.js';
import type { Module } from '../kernel/module.js';
import type { Dialect } from '../store/port.js';
import { coreModule } from '../server/core-routes.js';
import { testApp, type TestApp } from '../server/testing.js';
import { type DeliveryModule, type DeliveryModuleOptions, deliveryModule } from './module.js';
import type { DeliveryRow, EndpointRow } from './engine/sql.js';

/**
 * Delivery test helpers: the engine harness (an app with the delivery module and a way to enqueue)
 * and a scripted receiver on 127.0.0.1.
 */

// Vector 2a's secret (signature_vectors.md); the receiver verifies with the reference library.
export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export const FAST = {
  retry_schedule_ms: [0, 0, 0, 0],
  jitter: 0,
  retry_after_min_ms: 0,
  timeout_ms: 1_000,
};

/** Resolves once `check` holds, polling every 10 ms; throws after `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function message(eventId: string, title = 'Build finished'): Message {
  return { kind: 'progress', stage: 'done', severity: 'info', title, summary: 'all green', eventId };
}

export interface Harness extends TestApp {
  delivery: DeliveryModule;
  /** Appends a cause event and enqueues its delivery in one transaction; returns the event id. */
  enqueue(destination: string, title?: string): Promise<{ eventId: string; id: string }>;
  rows(): Promise<DeliveryRow[]>;
  endpoint(destination: string): Promise<EndpointRow | undefined>;
  drain(max?: number): Promise<void>;
  events(
    prefix: string,
  ): Promise<{ type: string; causation_id: string | null; summary: Record<string, unknown> }[]>;
}

export async function harness(opts: {
  dialect: Dialect;
  channels: Record<string, Record<string, unknown>>;
  delivery?: Record<string, unknown>;
  module?: DeliveryModuleOptions;
  /** An injected clock, so a test can assert on stored times instead of the wall clock. */
  now?: () => number;
  /** More modules beside core and delivery (the effect ledger). */
  modules?: Module[];
}): Promise<Harness> {
  const delivery = deliveryModule({
    workers: false,
    env: { HOOK_SECRET: SECRET },
    // Loopback-only sockets: a target the guard must refuse (10.0.0.1) stays unreachable if it did not.
    egress: { dial: loopbackOnly },
    ...opts.module,
    config: { ...FAST, ...opts.delivery },
  });
  const t = await testApp({
    dialect: opts.dialect,
    modules: [coreModule(), delivery, ...(opts.modules ?? [])],
    config: { channels: opts.channels, egress: { allow: ['127.0.0.1'] } },
    ...(opts.now ? { now: opts.now } : {}),
  });
  const h: Harness = {
    ...t,
    delivery,
    async enqueue(destination, title) {
      return t.services.db.tx(async (tx) => {
        const cause = await t.services.emit({ type: 'agent.progress.reported' }, tx);
        const svc = delivery.service();
        if (!svc) throw new Error('delivery module not started');
        const r = await svc.enqueue(tx, {
          eventId: cause.event_id,
          destination,
          message: message(cause.event_id, title),
        });
        return { eventId: cause.event_id, id: r.id };
      });
    },
    rows: () =>
      t.services.db.query<DeliveryRow>({ text: 'SELECT * FROM deliveries ORDER BY created_at, id' }),
    async endpoint(destination) {
      const r = await t.services.db.query<EndpointRow>({
        text: 'SELECT * FROM endpoints WHERE destination = $1',
        values: [destination],
      });
      return r[0];
    },
    async drain(max = 20) {
      const engine = delivery.engine();
      if (!engine) throw new Error('delivery module not started');
      for (let i = 0; i < max; i++) if ((await engine.runOnce()) === 0) return;
    },
    async events(prefix) {
      const list = await t.services.log.list({ type: `${prefix}.*`, limit: 1000 });
      return list.map((e) => ({
        type: e.envelope.type,
        causation_id: e.envelope.causation_id,
        summary: e.envelope.redacted_summary,
      }));
    },
  };
  return h;
}

/**
 * A local receiver with scripted answers for the delivery tests and the bench: it verifies Standard
 * Webhooks signatures with the reference library when given a secret, counts hits by `webhook-id`,
 * and can answer, hang after reading the request (an unknown outcome), or reset.
 */

export interface Hit {
  url: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export type Script =
  | { kind: 'answer'; status: number; body?: string; headers?: Record<string, string> }
  /** Read the request, then never answer: the sender times out after sending. */
  | { kind: 'hang' };

export interface ScriptedReceiver {
  url: string;
  hits: Hit[];
  /** Hits per `webhook-id` (or per body when absent). */
  byId: Map<string, number>;
  /** Signatures that failed verification. */
  badSignatures: number;
  /** Called for each request; returns what to do. Replace it between phases of a test. */
  script: (hit: Hit, n: number) => Script;
  onHit?: (hit: Hit) => void;
  close(): Promise<void>;
}

function flat(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export async function startScriptedReceiver(opts: { secret?: string } = {}): Promise<ScriptedReceiver> {
  const verifier = opts.secret ? new Webhook(opts.secret) : undefined;
  const hanging = new Set<ServerResponse>();
  const rx: ScriptedReceiver = {
    url: '',
    hits: [],
    byId: new Map(),
    badSignatures: 0,
    script: () => ({ kind: 'answer', status: 204 }),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit: Hit = {
        url: req.url ?? '',
        headers: flat(req),
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      if (verifier) {
        try {
          verifier.verify(hit.body, hit.headers);
        } catch {
          rx.badSignatures += 1;
          res.writeHead(401).end('bad signature');
          return;
        }
      }
      rx.hits.push(hit);
      const id = hit.headers['webhook-id'] ?? hit.body;
      rx.byId.set(id, (rx.byId.get(id) ?? 0) + 1);
      rx.onHit?.(hit);
      const s = rx.script(hit, rx.hits.length);
      if (s.kind === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(s.status, { 'content-type': 'application/json', ...s.headers });
      res.end(s.body ?? '');
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  rx.url = `http://127.0.0.1:${port}`;
  rx.close = () =>
    new Promise((resolve) => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return rx;
}
