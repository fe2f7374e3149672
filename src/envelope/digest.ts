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
    out = canonical(value, 0);
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
  const keys = Object.keys(record).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = canonical(record[key], depth + 1);
    if (member === undefined) continue;
    if (!key.isWellFormed()) throw new RangeError('lone surrogate');
    out += `${first ? '' : ','}${JSON.stringify(key)}:${member}`;
    first = false;
  }
  return `${out}}`;
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
