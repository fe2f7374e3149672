import { createHash } from 'node:crypto';
import { readJsonText } from '../../../envelope/json.js';
import type { InboundRequest, RejectReason, Rejected } from '../../source.js';

export const reject = (reason: RejectReason, message: string): Rejected => ({
  kind: 'rejected',
  reason,
  message,
});

/** A header's value, trimmed; an empty header counts as absent. `name` must be lower-case. */
export function header(req: InboundRequest, name: string): string | undefined {
  const value = req.headers[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** The bytes a scheme signs: text parts as UTF-8 around the raw body, never a re-encoded body. */
export function signedBytes(...parts: Array<string | Uint8Array>): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? encoder.encode(p) : p)));
}

export const bodyText = (body: Uint8Array): string => decoder.decode(body);

/** A dedup id for senders that send none: the same bytes retried give the same id. */
export const contentId = (...parts: Array<string | Uint8Array>): string =>
  `sha256:${createHash('sha256')
    .update(signedBytes(...parts))
    .digest('hex')}`;

export type Parsed = { ok: true; value: unknown } | { ok: false; rejected: Rejected };

/**
 * The verified body, parsed. Its signature was valid, so what RFC 8785 cannot hold is not refused: the
 * bytes are kept verbatim in the vault, and the parsed form has U+FFFD for a lone surrogate and null
 * for a number beyond a double, so every fact derived from it can be hashed (envelope/json.ts, repair).
 * Nesting past 64 is refused: no sender we know nests half as deep.
 */
export function parseJson(text: string, what = 'body'): Parsed {
  const read = readJsonText(text, { repair: true });
  if (read.ok) return { ok: true, value: read.value };
  if (read.code === 'json_too_deep')
    return { ok: false, rejected: reject('too_deep', `the ${what} is ${read.message}`) };
  return { ok: false, rejected: reject('malformed', `the ${what} is not valid JSON`) };
}

/** `application/x-www-form-urlencoded` to a plain object (last value wins). */
export function parseForm(text: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(text));
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string or finite number at `path` in a parsed payload, as a string; undefined otherwise. */
export function pick(value: unknown, ...path: string[]): string | undefined {
  let at: unknown = value;
  for (const key of path) {
    if (!isRecord(at)) return undefined;
    at = at[key];
  }
  if (typeof at === 'string' && at !== '') return at;
  if (typeof at === 'number' && Number.isFinite(at)) return String(at);
  return undefined;
}

/** Keeps only the bindings a payload actually carries. */
export function bindings(entries: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined) out[k] = v;
  return out;
}
