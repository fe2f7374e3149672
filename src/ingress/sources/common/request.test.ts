import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../envelope/digest.js';
import { hasLoneSurrogate } from '../../../text/index.js';
import { parseJson } from './request.js';

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const senderString = fc.string({
  unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), loneSurrogate),
  maxLength: 30,
});

describe('parsing a verified webhook body (properties)', () => {
  it('never throws on any text, and what it accepts can always be hashed', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.json()), (text) => {
        const parsed = parseJson(text);
        if (parsed.ok) expect(() => canonicalJson(parsed.value)).not.toThrow();
        else expect(['malformed', 'too_deep']).toContain(parsed.rejected.reason);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts any string a signed sender put in, lone surrogates repaired to U+FFFD', () => {
    fc.assert(
      fc.property(senderString, senderString, (key, value) => {
        const parsed = parseJson(JSON.stringify({ [key]: value, nested: [{ value }] }));
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(hasLoneSurrogate(JSON.stringify(parsed.value))).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a body nested past 64 as too_deep, whatever the sender signed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 65, max: 5000 }), (n) => {
        const parsed = parseJson(`${'['.repeat(n)}${']'.repeat(n)}`);
        expect(parsed.ok ? undefined : parsed.rejected.reason).toBe('too_deep');
      }),
      { numRuns: 100 },
    );
  });
});
