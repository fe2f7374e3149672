import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type Server as NetServer, type Socket, createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SendRequest, compileEgressPolicy, createGuardedDispatcher, sendOnce } from '../egress/index.js';
import { classify } from './retry.js';

// One attempt (`sendOnce`, src/egress) against a live receiver on 127.0.0.1, and how delivery's
// `classify` reads each result. It lives here because the classification is delivery's.

/** A local receiver whose behaviour is chosen by the path. */
interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
const sockets = new Set<Socket>();

function script(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ path: req.url ?? '', headers: req.headers, body });
  switch (req.url) {
    case '/ok':
      res.writeHead(200, { 'content-type': 'text/plain', 'x-trace': 'abc' }).end('fine');
      return;
    case '/slow':
      setTimeout(() => res.writeHead(200).end('late but fine'), 150);
      return;
    case '/hang':
      return; // never answers
    case '/hang-body':
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      return; // never finishes the body
    case '/reset':
      req.socket.resetAndDestroy();
      return;
    case '/429':
      res.writeHead(429, { 'retry-after': '7' }).end('slow down');
      return;
    case '/redirect':
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    case '/huge': {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let written = 0;
      const pump = () => {
        // 1 GiB if nobody stops it; the client must cut it at the cap.
        while (written < 1024 && !res.destroyed) {
          written += 1;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => {
        written = Number.POSITIVE_INFINITY;
      });
      pump();
      return;
    }
    default:
      res.writeHead(404).end();
  }
}

let server: Server;
let base: string;
let port: number;
const policy = compileEgressPolicy(['127.0.0.1']);
const dispatcher = createGuardedDispatcher(policy);

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => script(req, res, Buffer.concat(parts).toString('utf8')));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  await dispatcher.close();
});

function send(path: string, extra: Partial<SendRequest> = {}) {
  return sendOnce({
    url: `${base}${path}`,
    body: '{"hello":"world"}',
    headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' },
    dispatcher,
    ...extra,
  });
}

describe('sendOnce', () => {
  it('delivers the exact body and headers and reports a 200', async () => {
    const r = await send('/ok');
    expect(r).toMatchObject({ sent: true, status: 200, body: 'fine' });
    expect(r.headers?.['x-trace']).toBe('abc');
    expect(r.error).toBeUndefined();
    const last = seen.at(-1)!;
    expect(last.body).toBe('{"hello":"world"}');
    expect(last.headers['webhook-id']).toBe('msg_1');
    expect(last.headers['user-agent']).toBe('Switchboard');
    expect(classify(r, { attempt: 1, now: 0 })).toEqual({ kind: 'ok', status: 200 });
  });

  it('sends a Uint8Array body byte for byte', async () => {
    const bytes = new TextEncoder().encode('héllo');
    await send('/ok', { body: bytes.subarray(1) });
    expect(seen.at(-1)!.body).toBe(new TextDecoder().decode(bytes.subarray(1)));
  });

  it('waits for a slow receiver within the timeout', async () => {
    const r = await send('/slow', { timeoutMs: 2_000 });
    expect(r).toMatchObject({ sent: true, status: 200, body: 'late but fine' });
  });

  it('gives up on a receiver that never answers, and says the request went out', async () => {
    const r = await send('/hang', { timeoutMs: 200 });
    expect(r).toMatchObject({ sent: true, error: 'timeout' });
    expect(r.status).toBeUndefined();
    expect(r.durationMs).toBeLessThan(5_000);
    expect(classify(r, { attempt: 1, now: 0, random: () => 0.5 })).toEqual({
      kind: 'unknown',
      error: 'timeout',
      at: 5_000,
    });
  });

  it('keeps the status of a receiver that answers 200 and then stalls the body', async () => {
    const r = await send('/hang-body', { timeoutMs: 200 });
    expect(r).toMatchObject({ sent: true, status: 200, error: 'timeout', body: 'partial' });
    expect(classify(r, { attempt: 1, now: 0 }).kind).toBe('ok');
  });

  it('reports a reset after sending as unknown', async () => {
    const r = await send('/reset');
    expect(r).toMatchObject({ sent: true, error: 'reset' });
    expect(classify(r, { attempt: 1, now: 0 }).kind).toBe('unknown');
  });

  it('reports a refused connection as not sent, and classifies it as a retry', async () => {
    const closed = createNetServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await sendOnce({ url: `http://127.0.0.1:${freePort}/`, body: 'x', headers: {}, dispatcher });
    expect(r).toMatchObject({ sent: false, error: 'refused' });
    expect(classify(r, { attempt: 1, now: 0, random: () => 0.5 })).toEqual({
      kind: 'retry',
      at: 5_000,
      error: 'refused',
    });
  });

  it('passes a 429 with Retry-After to the classifier', async () => {
    const r = await send('/429');
    expect(r).toMatchObject({ sent: true, status: 429, body: 'slow down' });
    expect(r.headers?.['retry-after']).toBe('7');
    const outcome = classify(r, { attempt: 1, now: 0, random: () => 0.5 });
    expect(outcome).toMatchObject({
      kind: 'retry',
      at: 7_000,
      throttle: true,
      retryAfter: 7_000,
      status: 429,
    });
  });

  it('does not follow a redirect to the metadata address', async () => {
    const before = seen.length;
    const r = await send('/redirect');
    expect(r).toMatchObject({ sent: true, status: 302 });
    expect(r.headers?.location).toBe('http://169.254.169.254/latest/meta-data/');
    expect(seen.length).toBe(before + 1);
    expect(classify(r, { attempt: 1, now: 0, random: () => 0.5 })).toMatchObject({
      kind: 'retry',
      status: 302,
    });
  });

  it('cuts a gigantic body at the cap instead of buffering it', async () => {
    const r = await send('/huge', { maxResponseBytes: 64 * 1024, timeoutMs: 5_000 });
    expect(r).toMatchObject({ sent: true, status: 200, truncated: true });
    expect(r.body).toHaveLength(64 * 1024);
    expect(r.error).toBeUndefined();
  });

  it('stops when the caller aborts', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await send('/hang', { signal: ac.signal, timeoutMs: 5_000 });
    expect(r).toMatchObject({ error: 'aborted' });
  });

  it('reuses pooled connections instead of opening one per delivery', async () => {
    const fresh = createGuardedDispatcher(policy);
    const ports = new Set<number>();
    const note = (req: IncomingMessage) => ports.add(req.socket.remotePort ?? 0);
    server.on('request', note);
    for (let i = 0; i < 10; i++) await send('/ok', { dispatcher: fresh });
    server.off('request', note);
    await fresh.close();
    // undici's pool may open a second socket while the first is still finishing a response (plain
    // `undici.request` does the same), so this asserts reuse, not exactly one socket.
    expect(ports.size).toBeLessThanOrEqual(5);
  });
});

describe('sendOnce over TLS that never completes', () => {
  let raw: NetServer;
  const held = new Set<Socket>();
  beforeAll(async () => {
    // Accepts TCP and never says a word: the TLS handshake cannot finish.
    raw = createNetServer((s) => held.add(s));
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise<void>((r) => raw.close(() => r()));
  });

  it('times out before anything was sent, so the attempt is simply retried', async () => {
    const { port: tlsPort } = raw.address() as AddressInfo;
    const r = await sendOnce({
      url: `https://127.0.0.1:${tlsPort}/`,
      body: 'x',
      headers: {},
      dispatcher,
      timeoutMs: 200,
    });
    expect(r).toMatchObject({ sent: false, error: 'timeout' });
    expect(classify(r, { attempt: 1, now: 0 }).kind).toBe('retry');
  });

  it('treats a reset during the handshake as not sent', async () => {
    const resetting = createNetServer((s) => s.resetAndDestroy());
    await new Promise<void>((r) => resetting.listen(0, '127.0.0.1', r));
    const { port: p } = resetting.address() as AddressInfo;
    const r = await sendOnce({
      url: `https://127.0.0.1:${p}/`,
      body: 'x',
      headers: {},
      dispatcher,
      timeoutMs: 2_000,
    });
    await new Promise<void>((r2) => resetting.close(() => r2()));
    expect(r).toMatchObject({ sent: false, error: 'reset' });
    expect(classify(r, { attempt: 1, now: 0 }).kind).toBe('retry');
  });
});
