import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One ntfy action button as the JSON publish carries it (docs.ntfy.sh/publish/#action-buttons). */
export interface NtfyAction {
  action: 'view' | 'http' | 'broadcast';
  label: string;
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  clear?: boolean;
}

/** A JSON publish (docs.ntfy.sh/publish/#publish-as-json). */
export interface NtfyPublish {
  topic: string;
  message?: string;
  title?: string;
  tags?: string[];
  priority?: number;
  click?: string;
  actions?: NtfyAction[];
  [key: string]: unknown;
}

export interface NtfyStandIn {
  server: Server;
  url: string;
  published: NtfyPublish[];
  close(): Promise<void>;
}

/** The problem with a publish, in ntfy's words, or undefined when ntfy would take it. */
function problem(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be message JSON';
  const b = body as Partial<NtfyPublish>;
  if (typeof b.topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(b.topic)) return 'topic invalid';
  if (b.priority !== undefined && (!Number.isInteger(b.priority) || b.priority < 1 || b.priority > 5))
    return 'priority invalid';
  if (b.tags !== undefined && (!Array.isArray(b.tags) || b.tags.some((t) => typeof t !== 'string')))
    return 'tags invalid';
  if (b.actions !== undefined) {
    if (!Array.isArray(b.actions) || b.actions.length > 3) return 'actions invalid: too many actions';
    for (const a of b.actions) {
      if (!['view', 'http', 'broadcast'].includes(a.action)) return 'actions invalid: action type';
      if (typeof a.label !== 'string' || a.label === '') return 'actions invalid: label';
      if ((a.action === 'view' || a.action === 'http') && typeof a.url !== 'string')
        return 'actions invalid: url';
    }
  }
  return undefined;
}

/**
 * A local ntfy for tests and benchmarks: takes a JSON publish at the root URL the way ntfy documents
 * it, answers like ntfy (the message object, or `{code, http, error}` with 400), and records what it
 * took. `onPublish` sees each accepted publish as it arrives (a phone that taps a button, a clock).
 */
export async function ntfyStandIn(onPublish?: (p: NtfyPublish) => void): Promise<NtfyStandIn> {
  const published: NtfyPublish[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const why = req.method !== 'POST' || req.url !== '/' ? 'topic invalid' : problem(body);
      if (why) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 40001, http: 400, error: `invalid request: ${why}` }));
        return;
      }
      const p = body as NtfyPublish;
      published.push(p);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `msg${published.length}`,
          time: Math.floor(Date.now() / 1000),
          event: 'message',
          topic: p.topic,
        }),
      );
      onPublish?.(p);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    published,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
