import { hash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { describeJsonProblem, type JsonProblem, jsonProblem } from './json.js';

// canonicalize ships CommonJS with a default export; under NodeNext the callable sits on `.default`
// in some toolchains and on the module itself in others.
const canonicalizeFn = ((canonicalizeModule as unknown as { default?: unknown }).default ??
  canonicalizeModule) as (value: unknown) => string | undefined;

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

/** RFC 8785 (JSON Canonicalization Scheme) form of a JSON value; throws `CanonicalJsonError`. */
export function canonicalJson(value: unknown): string {
  let out: string | undefined;
  try {
    out = canonicalizeFn(value);
  } catch (err) {
    const problem =
      jsonProblem(value, DIAGNOSE_DEPTH) ??
      (err instanceof RangeError ? ({ kind: 'too_deep', path: '(root)' } as const) : undefined);
    if (problem) throw new CanonicalJsonError(problem);
    throw err;
  }
  if (out === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return out;
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
