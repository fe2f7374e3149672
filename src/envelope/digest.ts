import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// canonicalize ships CommonJS with a default export; under NodeNext the callable sits on `.default`
// in some toolchains and on the module itself in others.
const canonicalizeFn = ((canonicalizeModule as unknown as { default?: unknown }).default ??
  canonicalizeModule) as (value: unknown) => string | undefined;

/** RFC 8785 (JSON Canonicalization Scheme) form of a JSON value. */
export function canonicalJson(value: unknown): string {
  const out = canonicalizeFn(value);
  if (out === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return out;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `sha256:<hex>` over the canonical JSON form: the same value always has the same digest. */
export function jsonDigest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

export function bytesDigest(data: string | Uint8Array): string {
  return `sha256:${sha256Hex(data)}`;
}
