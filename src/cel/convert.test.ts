import { describe, expect, it } from 'vitest';
import { fromCel, toCel } from './convert.js';

describe('toCel', () => {
  it('turns integral numbers into BigInt and leaves fractions as doubles', () => {
    expect(toCel({ a: 1, b: [2, 2.5], c: { d: -3 }, e: 'x', f: null })).toEqual({
      a: 1n,
      b: [2n, 2.5],
      c: { d: -3n },
      e: 'x',
      f: null,
    });
  });

  it('does not touch the caller’s object', () => {
    const input = { n: 1 };
    toCel(input);
    expect(input.n).toBe(1);
  });
});

describe('fromCel', () => {
  it('turns CEL values back into JSON', () => {
    expect(fromCel({ a: 1n, b: new Map([['c', [2n, 'x']]]) })).toEqual({
      ok: true,
      value: { a: 1, b: { c: [2, 'x'] } },
    });
  });

  it('refuses bytes and integers JSON cannot carry exactly', () => {
    expect(fromCel({ a: new Uint8Array(1) }).ok).toBe(false);
    expect(fromCel({ a: 2n ** 60n }).ok).toBe(false);
  });
});
