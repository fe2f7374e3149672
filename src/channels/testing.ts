import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpPost } from './channel.js';

/** Test helpers: a local provider stand-in on 127.0.0.1 and a plain (unguarded) HTTP sender. */

export interface ReceivedRequest {
  method: string;
  /** Path and query, as the provider sees it. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Starts a receiver whose `answer` checks each request the way the provider would. */
export async function startReceiver(answer: (req: ReceivedRequest) => Answer): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: flatHeaders(req),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(got);
      const a = answer(got);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A plain fetch-based sender for tests; production passes the delivery engine's guarded one. */
export const fetchPost: HttpPost = async (req) => {
  const res = await fetch(req.url, {
    method: req.method ?? 'POST',
    headers: req.headers,
    body: req.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(req.timeoutMs ?? 10_000),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { status: res.status, headers, body: await res.text() };
};

export const json = (status: number, value: unknown, headers?: Record<string, string>): Answer =>
  headers ? { status, body: JSON.stringify(value), headers } : { status, body: JSON.stringify(value) };

export const response = (status: number, value: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: typeof value === 'string' ? value : JSON.stringify(value),
});
