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

  it('returns a list or object with nothing to convert as it is, and copies only what changes', () => {
    const strings = { command: 'ls', argv: ['ls', '-l'], commands: [{ program: 'ls', flags: ['-l'] }] };
    expect(toCel(strings)).toBe(strings);
    const mixed = { a: ['x'], b: { c: 1 } };
    const out = toCel(mixed) as typeof mixed;
    expect(out).not.toBe(mixed);
    expect(out.a).toBe(mixed.a);
    expect(out.b).toEqual({ c: 1n });
  });

  it('still copies an object with an own __proto__ key, which the copy does not keep as a field', () => {
    const input = JSON.parse('{"__proto__": {"x": "y"}, "a": "b"}') as Record<string, unknown>;
    const out = toCel(input) as Record<string, unknown>;
    expect(out).not.toBe(input);
    expect(Object.hasOwn(out, '__proto__')).toBe(false);
    expect(out.a).toBe('b');
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
