import { request as httpRequest } from 'node:http';

export type PostOutcome =
  | { kind: 'answered'; status: number; body: string }
  | { kind: 'failed'; why: string };

/**
 * One POST with a hard deadline covering connect, send and the whole reply. node:http rather than
 * fetch: fetch loads undici on first use, which costs the bridge more start-up than the request itself;
 * node:https (and TLS with it, ~3 ms of the bridge's start-up) is loaded only for an https URL.
 */
export async function post(
  url: URL,
  body: Uint8Array,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PostOutcome> {
  const started = Date.now();
  const send = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-length': String(body.byteLength) },
    });
    const timer = setTimeout(
      () => {
        done({ kind: 'failed', why: `no answer within ${timeoutMs} ms` });
        req.destroy();
      },
      Math.max(0, timeoutMs - (Date.now() - started)),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ kind: 'failed', why: err.message || String(err.code) }),
    );
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => done({ kind: 'failed', why: err.message }));
      res.on('end', () =>
        done({ kind: 'answered', status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.end(body);
  });
}
