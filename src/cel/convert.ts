import { celMessage } from './environment.js';

/**
 * CEL keeps `int` and `double` apart and cel-js maps `int` to BigInt, so a JSON `5` arriving as a JS
 * number is a double and `input.count + 1` fails with "no such overload". Integral numbers become
 * BigInt here, once per evaluation, so rules are written the way CEL reads (`+ 1`, `> 3`);
 * fractional numbers stay doubles (`input.ratio + 0.5`). Pinned by convert.test.ts.
 */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = toCel((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

export type FromCel = { ok: true; value: unknown } | { ok: false; message: string };

/** A CEL result back to JSON: BigInt → number (when exact), Map → object; bytes and the like are refused. */
export function fromCel(value: unknown): FromCel {
  try {
    return { ok: true, value: toJson(value) };
  } catch (err) {
    return { ok: false, message: celMessage(err) };
  }
}

function toJson(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a modified input holds a non-finite number');
    return value;
  }
  if (typeof value === 'bigint') {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error('a modified input holds an integer beyond 2^53');
    return n;
  }
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) {
      if (typeof k !== 'string') throw new Error('a modified input has a non-string key');
      out[k] = toJson(v);
    }
    return out;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJson(v);
    return out;
  }
  throw new Error(`a modified input holds a value JSON cannot carry (${typeof value})`);
}
