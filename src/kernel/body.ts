import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError } from '../errors/index.js';
import type { AppEnv } from './module.js';

/**
 * Reads the raw body with a hard cap: a declared Content-Length over the cap is refused before reading,
 * and a chunked body is cut off as soon as it passes the cap, so no handler ever buffers more.
 */
export async function readBody(c: Context<AppEnv>, limit: number): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) {
    throw new AppError('payload_too_large', `the body is ${declared} bytes; the limit is ${limit}`);
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
      await reader.cancel().catch(() => {});
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

export function requireJsonContentType(c: Context<AppEnv>): void {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new AppError(
      'unsupported_media_type',
      `send Content-Type: application/json (got ${type ? JSON.stringify(type.slice(0, 80)) : 'none'})`,
    );
  }
}

/** Content type, size cap, JSON syntax, then the schema: each failure has its own status and code. */
export async function readJson<T>(c: Context<AppEnv>, schema: z.ZodType<T>, limit: number): Promise<T> {
  requireJsonContentType(c);
  const bytes = await readBody(c, limit);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new AppError('invalid_json', `the body is not valid JSON: ${(err as Error).message}`);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError(
      'validation_failed',
      result.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${i.message}`)
        .join('; '),
      result.error.issues.map((i) => ({ path: i.path.join('.'), code: i.code, message: i.message })),
    );
  }
  return result.data;
}
