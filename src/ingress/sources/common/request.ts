import { createHash } from 'node:crypto';
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

export function parseJson(text: string, what = 'body'): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, rejected: reject('malformed', `the ${what} is not valid JSON`) };
  }
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
