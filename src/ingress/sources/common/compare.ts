import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time string equality. `timingSafeEqual` throws on unequal lengths, so a length mismatch
 * still runs one comparison of the same size: how long this takes never says where two values differ.
 */
export function safeEqual(received: string, expected: string): boolean {
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** True when `received` equals any expected value; compares against all of them (key rotation). */
export function matchesAny(received: string, expected: readonly string[]): boolean {
  let matched = false;
  for (const candidate of expected) {
    if (safeEqual(received, candidate)) matched = true;
  }
  return matched;
}
