import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

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
