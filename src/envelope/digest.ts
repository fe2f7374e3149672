import { hash } from 'node:crypto';
import { describeJsonProblem, type JsonProblem, jsonProblem } from './json.js';

/**
 * A value RFC 8785 has no form for: a lone surrogate, a number beyond a double, or nesting deep enough
 * to overflow the canonicalizer. Input is refused at the door for these (json.ts); this is the net
 * under it, which the HTTP mapping answers with the same 400 codes (kernel/http.ts), never a 500.
 */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
  constructor(readonly problem: JsonProblem) {
    super(`no RFC 8785 form: ${describeJsonProblem(problem)}`);
  }
}

// Only to say where, after the canonicalizer failed: deeper than this is reported as too deep.
const DIAGNOSE_DEPTH = 1000;
// Deeper than this is refused (a cycle ends here too). The door refuses far less (json.ts).
const MAX_DEPTH = 2000;

/**
 * RFC 8785 (JSON Canonicalization Scheme) form of a JSON value; throws `CanonicalJsonError`.
 *
 * RFC 8785 is JSON.stringify's own number and string forms with object keys sorted by UTF-16 code
 * units, refusing lone surrogates and non-finite numbers. So one walk sorts the keys and hands every
 * string and number to the engine's JSON.stringify, checking strings with `isWellFormed()`. The
 * `canonicalize` package (the RFC authors' JavaScript) does the same walk but scans every string one
 * character at a time in JavaScript, which was ~9 % of a reach touch's CPU; it stays the oracle that
 * `digest.test.ts` checks this walk against over generated values.
 */
export function canonicalJson(value: unknown): string {
  let out: string | undefined;
  try {
    out = inOrder(value, 0) ? JSON.stringify(value) : canonical(value, 0);
  } catch (err) {
    if (err instanceof CanonicalJsonError) throw err;
    const problem =
      jsonProblem(value, DIAGNOSE_DEPTH) ??
      (err instanceof RangeError ? ({ kind: 'too_deep', path: '(root)' } as const) : undefined);
    if (problem) throw new CanonicalJsonError(problem);
    throw err;
  }
  if (out === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return out;
}

/**
 * Whether `JSON.stringify(value)` is already its RFC 8785 form: plain objects and arrays only (no
 * `toJSON`, no other prototype), every object's keys in UTF-16 order, every string well formed, every
 * number finite. Then the engine writes it in one native pass, with no intermediate strings: an
 * envelope is built in key order (build.ts), so all but a module's own `redacted_summary` usually is.
 * Anything else takes the walk below, which sorts.
 */
function inOrder(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return value.isWellFormed();
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    case 'bigint':
      return false;
    default:
      return true; // boolean, and what both drop or write as null (undefined, functions, symbols)
  }
  if (value === null) return true;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
    for (let i = 0; i < value.length; i++) if (!inOrder(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  if (typeof record.toJSON === 'function') return false;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (i > 0 && (keys[i - 1] as string) > key) return false;
    if (!key.isWellFormed() || !inOrder(record[key], depth + 1)) return false;
  }
  return true;
}

/** `undefined` for what JSON has no form for (undefined, functions, symbols): dropped from objects, null in arrays. */
function canonical(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw new RangeError('lone surrogate');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new TypeError('BigInt has no JSON form');
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (depth > MAX_DEPTH) throw new RangeError('nested too deep');
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return canonical(toJSON.call(value), depth + 1);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += canonical(value[i], depth + 1) ?? 'null';
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  // Sorted only when out of order (`<` and sort's default both compare UTF-16 code units): envelopes are
  // built in key order (build.ts), and a sort allocates its work array, ~18 % of a touch's garbage.
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const member = canonical(record[key], depth + 1);
    if (member === undefined) continue;
    if (!key.isWellFormed()) throw new RangeError('lone surrogate');
    if (!first) out += ',';
    out += quotedKey(key);
    out += ':';
    out += member;
    first = false;
  }
  return `${out}}`;
}

/** Keys in their JSON form, remembered: a log's keys are a small vocabulary, each quoted once. */
const QUOTED = new Map<string, string>();
const QUOTED_MAX = 4096;
const QUOTED_KEY_MAX = 64;

function quotedKey(key: string): string {
  let q = QUOTED.get(key);
  if (q === undefined) {
    q = JSON.stringify(key);
    if (key.length <= QUOTED_KEY_MAX && QUOTED.size < QUOTED_MAX) QUOTED.set(key, q);
  }
  return q;
}

/** One-shot `crypto.hash` (Node ≥ 20.12; engines says 20.19): no Hash object, under half the cost of a short digest. */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/** `sha256:<hex>` over the canonical JSON form: the same value always has the same digest. */
export function jsonDigest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

export function bytesDigest(data: string | Uint8Array): string {
  return `sha256:${sha256Hex(data)}`;
}
