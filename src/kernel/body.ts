import type { Context } from 'hono';
import type { z } from 'zod';
import { type JsonReadOptions, readJsonText } from '../envelope/json.js';
import { AppError } from '../errors/index.js';
import type { AppEnv } from './module.js';

/**
 * After a body goes over its cap, or when a route answered without reading it: how much more is read
 * and dropped so the connection can carry the next request. A client that sent 2 MiB where 1 MiB is
 * the limit gets its 413 and keeps its connection; past either bound the answer says
 * `connection: close` (and the server reads on while it closes, serve.ts), never keep-alive followed
 * by a reset. server.test.ts drives both with a raw socket.
 */
export const DRAIN_MAX_BYTES = 1024 * 1024;
export const DRAIN_MAX_MS = 1000;

/** What a closing connection still discards in the background, so the socket never fills and resets. */
const DISCARD_MAX_MS = 5000;

type Reader = ReadableStreamDefaultReader<Uint8Array>;

const DECIMAL = /^\d+$/;

/**
 * Reads the raw body with a hard cap: a declared Content-Length over the cap is refused before reading,
 * and a chunked body is cut off as soon as it passes the cap, so no handler ever buffers more. The rest
 * of an oversized body is drained (see DRAIN_MAX_BYTES) before the 413.
 */
export async function readBody(c: Context<AppEnv>, limit: number): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) {
    const reader = c.req.raw.body?.getReader();
    const kept =
      reader && Number(declared) - limit <= DRAIN_MAX_BYTES && (await drain(reader, Number(declared)));
    if (!kept) closeAfter(c, reader);
    throw new AppError('payload_too_large', `the body is ${declared} bytes; the limit is ${limit}`);
  }
  if (declared !== undefined && DECIMAL.test(declared)) {
    // Framed by a Content-Length within the cap, so the HTTP parser ends the body there: read it
    // whole, which @hono/node-server does straight off the socket (no web stream, no Request copy;
    // about a tenth of a webhook's CPU went to those).
    return new Uint8Array(await c.req.raw.arrayBuffer());
  }
  const stream = c.req.raw.body;
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      if (!(await drain(reader, DRAIN_MAX_BYTES))) closeAfter(c, reader);
      throw new AppError('payload_too_large', `the body is over the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * For the app's last middleware: a body the route never read (a 401 before the body, a 404) is
 * drained the same way, so the next request on the connection is not lost either.
 */
export async function drainUnread(c: Context<AppEnv>): Promise<void> {
  // Headers first: asking a request with no body whether it was read makes @hono/node-server
  // build the whole web Request it otherwise never needs.
  const te = c.req.header('transfer-encoding');
  const length = Number(c.req.header('content-length') ?? 0);
  if (!te && !(length > 0)) return;
  const req = c.req.raw;
  if (req.bodyUsed) return;
  const stream = req.body;
  if (!stream || stream.locked) return;
  const reader = stream.getReader();
  const kept = (te ? true : length <= DRAIN_MAX_BYTES) && (await drain(reader, DRAIN_MAX_BYTES));
  if (!kept) closeAfter(c, reader);
}

/** Reads and drops up to `maxBytes` within DRAIN_MAX_MS; true when the body ended inside both. */
async function drain(reader: Reader, maxBytes: number): Promise<boolean> {
  const deadline = Date.now() + DRAIN_MAX_MS;
  let seen = 0;
  try {
    for (;;) {
      const next = await beforeDeadline(reader.read(), deadline);
      if (next === undefined) return false;
      if (next.done) return true;
      seen += next.value.byteLength;
      if (seen > maxBytes) return false;
    }
  } catch {
    return false;
  }
}

/**
 * This answer ends the connection: it says `connection: close`, and the rest of the body is still read
 * and dropped (for a while) instead of left in the socket, where it would turn the close into a reset
 * that can destroy the 413 before the client reads it.
 */
function closeAfter(c: Context<AppEnv>, reader: Reader | undefined): void {
  c.set('closeConnection', true);
  if (!reader) return;
  const deadline = Date.now() + DISCARD_MAX_MS;
  void (async () => {
    try {
      for (;;) {
        const next = await beforeDeadline(reader.read(), deadline);
        if (next === undefined || next.done) break;
      }
    } catch {
      // The client went away: nothing left to read.
    }
  })();
}

async function beforeDeadline<T>(p: Promise<T>, deadline: number): Promise<T | undefined> {
  const ms = deadline - Date.now();
  if (ms <= 0) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function requireJsonContentType(c: Context<AppEnv>): void {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new AppError(
      'unsupported_media_type',
      `send Content-Type: application/json (got ${type ? JSON.stringify(type.slice(0, 80)) : 'none'})`,
    );
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Request JSON from bytes: strict UTF-8, then `readJsonText` (syntax, depth past MAX_JSON_DEPTH, lone
 * surrogates, numbers beyond a double), each refused with its own catalogue code. `what` names the
 * value in the message (`the body`, `payload_json`).
 */
export function parseJsonBytes(bytes: Uint8Array, what = 'the body', opts?: JsonReadOptions): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new AppError('invalid_json', `${what} is not valid UTF-8`);
  }
  return parseJsonInput(text, what, opts);
}

/** `parseJsonBytes` for text already decoded (a JSON string inside a body, a form field). */
export function parseJsonInput(text: string, what = 'the body', opts?: JsonReadOptions): unknown {
  const read = readJsonText(text, opts);
  if (!read.ok)
    throw new AppError(
      read.code,
      `${what} is ${read.code === 'invalid_json' ? '' : 'refused: '}${read.message}`,
    );
  return read.value;
}

/** Content type, size cap, JSON syntax and shape, then the schema: each failure has its own status and code. */
export async function readJson<T>(c: Context<AppEnv>, schema: z.ZodType<T>, limit: number): Promise<T> {
  requireJsonContentType(c);
  const bytes = await readBody(c, limit);
  const value = parseJsonBytes(bytes);
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(result.error.issues, '(body)');
  return result.data;
}

/** The query string against a strict schema: an unknown or malformed parameter is a 400 naming it. */
export function readQuery<T>(c: Context<AppEnv>, schema: z.ZodType<T>): T {
  const result = schema.safeParse(c.req.query());
  if (!result.success) throw invalid(result.error.issues, '(query)');
  return result.data;
}

function invalid(issues: z.core.$ZodIssue[], whole: string): AppError {
  return new AppError(
    'validation_failed',
    issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join('.') : whole}: ${i.message}`)
      .join('; '),
    issues.map((i) => ({ path: i.path.join('.'), code: i.code, message: i.message })),
  );
}
