import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasLoneSurrogate, wellFormed } from '../text/index.js';
import { reportFor, SUMMARY_MAX } from './context.js';
import { promptText } from './phone.js';

// What a runtime says: any well-formed text, emoji, flags and ZWJ sequences included.
const words = fc
  .string({
    unit: fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      fc.constantFrom('🚀', '👨‍👩‍👧‍👦', '🇫🇷', '👍🏽', 'e\u0301'),
    ),
    maxLength: 400,
  })
  .map(wellFormed);

describe('the words a signal carries to the phone (properties)', () => {
  it('are cut to fit without ever leaving half a character', () => {
    fc.assert(
      fc.property(words, words, fc.integer({ min: 0, max: 300 }), (headline, text, max) => {
        const r = reportFor(
          { kind: 'turn_done', stage: 'done', severity: 'info', headline, text, needsPerson: false },
          { project: 'p' },
          max,
        );
        expect(r.summary.length).toBeLessThanOrEqual(SUMMARY_MAX);
        expect(hasLoneSurrogate(r.summary)).toBe(false);
        expect(hasLoneSurrogate(r.detail ?? '')).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('make a permission prompt whose action fits and is well-formed', () => {
    fc.assert(
      fc.property(words, (command) => {
        const { action } = promptText('claude-code', { tool: 'Bash', input: { command } }, {});
        expect(action.length).toBeLessThanOrEqual(200);
        expect(hasLoneSurrogate(action)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});
