import { celMessage } from './environment.js';

/**
 * CEL keeps `int` and `double` apart and cel-js maps `int` to BigInt, so a JSON `5` arriving as a JS
 * number is a double and `input.count + 1` fails with "no such overload". Integral numbers become
 * BigInt here, once per evaluation, so rules are written the way CEL reads (`+ 1`, `> 3`);
 * fractional numbers stay doubles (`input.ratio + 0.5`). Pinned by convert.test.ts.
 *
 * A list or object with nothing to convert is returned as it is, not copied: CEL only reads it, and
 * a decision's input or shell args are mostly strings, so most decisions allocate nothing here. An
 * object with an own `__proto__` key is still copied, as before: the copy's assignment turns that
 * key into the prototype, which CEL does not see as a field (convert.test.ts pins both).
 */
export function toCel(value: unknown): unknown {
  // Looking first allocates nothing; most inputs (strings only) then need no copy at all.
  return needsCel(value, 0) ? convert(value) : value;
}

/** Whether `convert` would change anything: an integral number, or an object's own `__proto__` key. */
function needsCel(value: unknown, depth: number): boolean {
  if (typeof value === 'number') return Number.isInteger(value);
  if (typeof value !== 'object' || value === null) return false;
  // Deep enough to be odd: let the copy decide, as before.
  if (depth > 64) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (needsCel(value[i], depth + 1)) return true;
    return false;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key === '__proto__' || needsCel((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

function convert(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return listToCel(value);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return objectToCel(value as Record<string, unknown>);
  return value;
}

function listToCel(list: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    const c = convert(v);
    if (out) out.push(c);
    else if (c !== v) {
      out = list.slice(0, i);
      out.push(c);
    }
  }
  return out ?? list;
}

function objectToCel(object: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(object);
  let changed = false;
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = object[key];
    const c = convert(v);
    values[i] = c;
    if (c !== v || key === '__proto__') changed = true;
  }
  if (!changed) return object;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) out[keys[i]!] = values[i];
  return out;
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
