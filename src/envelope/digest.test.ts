import canonicalizeModule from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalJsonError, canonicalJson } from './digest.js';

// The RFC authors' JavaScript implementation, the oracle of the walk in digest.ts.
const canonicalize = ((canonicalizeModule as unknown as { default?: unknown }).default ??
  canonicalizeModule) as (value: unknown) => string | undefined;

describe('canonicalJson (RFC 8785)', () => {
  it('gives the RFC 8785 §3.2.2 example its canonical form', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units (RFC 8785 §3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac": 1, "\\r": 2, "\\ufb33": 3, "1": 4, "\\ud83d\\ude00": 5, "\\u0080": 6, "\\u00f6": 7}',
    );
    expect(Object.values(JSON.parse(canonicalJson(input)))).toEqual([4, 2, 6, 7, 1, 5, 3]);
    expect(canonicalJson(input).startsWith('{"\\r":2,"1":4,')).toBe(true);
  });

  it('writes numbers the ECMAScript way', () => {
    const cases: [number, string][] = [
      [-0, '0'],
      [5e-324, '5e-324'],
      [-5e-324, '-5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [9007199254740992, '9007199254740992'],
      [1e21, '1e+21'],
      [1e23, '1e+23'],
      [0.000001, '0.000001'],
      [1e-7, '1e-7'],
    ];
    for (const [n, text] of cases) expect(canonicalJson(n)).toBe(text);
  });

  it('equals the canonicalize package over generated JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('equals it for values whose keys are already in order (the one-pass path: JSON.stringify)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        // Parsed back from its canonical form, every object's keys are in order (integer-like keys aside).
        const sorted = JSON.parse(canonicalize(value) as string) as unknown;
        expect(canonicalJson(sorted)).toBe(canonicalize(sorted));
      }),
      { numRuns: 2000 },
    );
    // What the one pass must not take as it is: boxed primitives, a toJSON, and a lone surrogate.
    const boxed = { a: new String('ab') };
    expect(canonicalJson(boxed)).toBe(canonicalize(boxed));
    expect(canonicalJson({ a: { toJSON: () => 'x' } })).toBe('{"a":"x"}');
    expect(() => canonicalJson({ a: 'x\ud800' })).toThrow(CanonicalJsonError);
  });

  it('equals it over full-Unicode strings and keys, and objects with toJSON', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    const value = fc.dictionary(
      text,
      fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.date({ noInvalidDate: true })),
    );
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(canonicalize(v));
      }),
      { numRuns: 1000 },
    );
  });

  it('drops undefined members and writes undefined array items as null, as the package does', () => {
    const v = { a: undefined, b: [undefined, 1], c: { d: undefined } };
    expect(canonicalJson(v)).toBe('{"b":[null,1],"c":{}}');
    expect(canonicalJson(v)).toBe(canonicalize(v));
  });

  it('refuses what RFC 8785 has no form for', () => {
    expect(() => canonicalJson({ a: 'x\ud800' })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ ['\udc00']: 1 })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson([Number.NaN])).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow();
  });

  it('reports a too deep value as too deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(/too deep|nest/i);
  });
});
