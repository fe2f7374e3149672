import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, testGateway, type TestGateway } from './testing.js';
import { allModules } from './modules.js';

/**
 * Issue #22, class 3: what a client sees on one kept-alive socket after its body was refused. Driven with
 * raw `node:net` sockets, since fetch clients hide both a reset and a lost pipelined request.
 */

const LIMIT = 1024;
const CHUNK = 16 * 1024;

interface Seen {
  text: string;
  /** The server's FIN arrived. */
  ended: boolean;
  /** ECONNRESET, EPIPE: a reset the client was not told about. */
  error?: string;
}

interface Plan {
  /** `chunked`, or a declared Content-Length. */
  framing: 'chunked' | { length: number };
  /** Body bytes to send at most (fewer if the server answers first and `stopOnAnswer`). */
  bytes: number;
  /** Pause between chunks, to look like a slow uplink. */
  delayMs?: number;
  auth?: boolean;
  /** Then this request on the same socket. */
  next?: string;
}

const resets: string[] = [];
let answered413 = 0;

function exchange(port: number, plan: Plan): Promise<Seen> {
  return new Promise((resolve) => {
    // allowHalfOpen: the client keeps its side open after the server's FIN, as a client still sending does.
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const seen: Seen = { text: '', ended: false };
    let stop = false;
    const done = () => resolve(seen);
    s.on('data', (d) => {
      seen.text += d.toString('latin1');
      // Like curl: once the final answer is in, stop sending the body.
      if (/\r\n\r\n\{.*\}$/s.test(seen.text) && !plan.next) stop = true;
    });
    s.on('end', () => {
      seen.ended = true;
      stop = true;
      s.end();
    });
    s.on('error', (err) => {
      seen.error = (err as NodeJS.ErrnoException).code ?? err.message;
      stop = true;
    });
    s.on('close', done);
    const framing =
      plan.framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${plan.framing.length}`;
    const auth = plan.auth === false ? '' : `Authorization: Bearer ${KEYS.admin}\r\n`;
    s.write(
      `POST /v1/approvals HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\n${framing}\r\n\r\n`,
    );
    let sent = 0;
    const body = Buffer.alloc(CHUNK, 0x78);
    const pump = () => {
      while (!stop && sent < plan.bytes) {
        const n = Math.min(CHUNK, plan.bytes - sent);
        const piece =
          plan.framing === 'chunked'
            ? `${n.toString(16)}\r\n${body.subarray(0, n).toString()}\r\n`
            : body.subarray(0, n);
        sent += n;
        const more = s.write(piece);
        if (plan.delayMs) return void setTimeout(pump, plan.delayMs);
        if (!more) return void s.once('drain', pump);
      }
      if (stop) return;
      if (plan.framing === 'chunked') s.write('0\r\n\r\n');
      if (plan.next) s.write(plan.next);
      // Give the server time to answer both, then say goodbye like a client with nothing more to send.
      setTimeout(() => s.end(), 1500);
    };
    pump();
  });
}

function answers(seen: Seen): { status: number; close: boolean }[] {
  return [...seen.text.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)].map((m) => ({
    status: Number(m[1]),
    close: /^connection: close$/im.test(m[2]!),
  }));
}

function tally(seen: Seen) {
  if (seen.error) resets.push(seen.error);
  answered413 += answers(seen).filter((a) => a.status === 413).length;
}

const HEALTH = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

describe('a kept-alive connection after a refused body', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await testGateway({
      dialect: 'sqlite',
      modules: allModules(),
      config: {
        auth: { keys: [{ name: 'a', role: 'admin', key: KEYS.admin }] },
        server: { body_limit_bytes: LIMIT },
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    // The measured goal of issue #22: printed for the closing note.
    console.log(`connection: ${answered413} answers 413, ${resets.length} resets`);
    expect(resets).toEqual([]);
  });

  it('drains a chunked body a little over the limit and answers the next request on the socket', async () => {
    const seen = await exchange(gw.gateway.port, { framing: 'chunked', bytes: 8 * LIMIT, next: HEALTH });
    tally(seen);
    expect(answers(seen)).toEqual([
      { status: 413, close: false },
      { status: 200, close: false },
    ]);
    expect(seen.error).toBeUndefined();
  });

  it('does the same for a declared Content-Length a little over the limit', async () => {
    const seen = await exchange(gw.gateway.port, {
      framing: { length: 4 * LIMIT },
      bytes: 4 * LIMIT,
      next: HEALTH,
    });
    tally(seen);
    expect(answers(seen).map((a) => a.status)).toEqual([413, 200]);
  });

  it('drains a body the route never read (a 401 before the body) and answers the next request', async () => {
    const seen = await exchange(gw.gateway.port, {
      framing: 'chunked',
      bytes: 4 * LIMIT,
      auth: false,
      next: HEALTH,
    });
    tally(seen);
    expect(answers(seen).map((a) => a.status)).toEqual([401, 200]);
  });

  it('says connection: close, then closes cleanly, when a client keeps sending far past the limit', async () => {
    const seen = await exchange(gw.gateway.port, { framing: 'chunked', bytes: 64 * 1024 * 1024 });
    tally(seen);
    expect(answers(seen)).toEqual([{ status: 413, close: true }]);
    expect(seen).toMatchObject({ ended: true });
    expect(seen.error).toBeUndefined();
  });

  it('says connection: close at once for a declared length far over the limit, and closes cleanly', async () => {
    const seen = await exchange(gw.gateway.port, {
      framing: { length: 64 * 1024 * 1024 },
      bytes: 64 * 1024 * 1024,
    });
    tally(seen);
    expect(answers(seen)).toEqual([{ status: 413, close: true }]);
    expect(seen.error).toBeUndefined();
  });

  it('says connection: close when the rest of the body is too slow to drain, never keep-alive then a reset', async () => {
    const seen = await exchange(gw.gateway.port, {
      framing: 'chunked',
      bytes: 12 * CHUNK,
      delayMs: 150,
      next: HEALTH,
    });
    tally(seen);
    expect(answers(seen)).toEqual([{ status: 413, close: true }]);
    expect(seen).toMatchObject({ ended: true });
    expect(seen.error).toBeUndefined();
  });
});
