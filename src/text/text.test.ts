import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ELLIPSIS,
  hasLoneSurrogate,
  type LengthUnit,
  measure,
  prefix,
  stripMassMentions,
  truncate,
  wellFormed,
} from './index.js';

describe('stripMassMentions', () => {
  it('removes every room-wide mention form the providers know', () => {
    const text =
      'a @all b @everyone c @here d <!channel> e <!here|here> f <at user_id="all">所有人</at> g <at id=all></at> h @所有人';
    expect(stripMassMentions(text)).toBe('a  b  c  d  e  f  g  h ');
  });

  it('does not rebuild a mass mention out of the pieces it removed', () => {
    expect(stripMassMentions('@<!here>all and <!<!here>channel>')).toBe(' and ');
  });

  it('returns text with neither @ nor < as it is, since every form starts with one of them', () => {
    const text = 'all here channel everyone !channel at id=all 所有人 /at';
    expect(stripMassMentions(text)).toBe(text);
    expect(stripMassMentions(`@${text}`)).toBe(' here channel everyone !channel at id=all 所有人 /at');
  });

  it('keeps mentions of people whose names start like a mass mention', () => {
    expect(stripMassMentions('ask @alice, @allison and @hereford')).toBe(
      'ask @alice, @allison and @hereford',
    );
  });
});

describe('truncate', () => {
  it('leaves text that fits alone', () => {
    expect(truncate('short', 5, 'chars')).toBe('short');
  });

  it('cuts to the limit including the ellipsis', () => {
    expect(truncate('abcdefgh', 5, 'chars')).toBe('abcd…');
  });

  it('counts UTF-8 bytes and never splits a character', () => {
    const out = truncate('数据库迁移失败', 10, 'bytes');
    expect(out).toBe('数据…');
    expect(measure(out, 'bytes')).toBeLessThanOrEqual(10);
  });

  it('never splits a surrogate pair', () => {
    expect(truncate('🚀🚀🚀', 4, 'chars')).toBe('🚀…');
  });
});

// Any text a sender or a runtime can produce: whole graphemes (flags, ZWJ families, accents), raw code
// points in any order, and lone surrogates (half of a pair, which `"\ud83d"` in JSON yields).
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const anyUnit = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom('🚀', '👍🏽', '🇫🇷', '👨‍👩‍👧‍👦', 'é', 'e\u0301', '数', '\u200d') },
  { weight: 1, arbitrary: loneSurrogate },
);
const anyText = fc.string({ unit: anyUnit, maxLength: 300 });
const wellFormedText = anyText.map(wellFormed);
const units = fc.constantFrom<LengthUnit>('chars', 'bytes');
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const boundaries = (text: string) =>
  new Set([...segmenter.segment(text)].map((s) => s.index).concat(text.length));

describe('cutting text (properties)', () => {
  it('always fits the limit, keeps a start of the text, and never makes a lone surrogate', () => {
    fc.assert(
      fc.property(wellFormedText, fc.integer({ min: 0, max: 400 }), units, (text, max, unit) => {
        for (const out of [truncate(text, max, unit), prefix(text, max, unit)]) {
          expect(measure(out, unit)).toBeLessThanOrEqual(Math.max(max, 0));
          expect(hasLoneSurrogate(out)).toBe(false);
          const kept = out.endsWith(ELLIPSIS) && out !== text ? out.slice(0, -ELLIPSIS.length) : out;
          expect(text.startsWith(kept)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('cuts between grapheme clusters whenever the first cluster fits', () => {
    fc.assert(
      fc.property(wellFormedText, fc.integer({ min: 1, max: 400 }), units, (text, max, unit) => {
        const out = prefix(text, max, unit);
        const first = [...segmenter.segment(text)][0]?.segment ?? '';
        if (measure(first, unit) <= max) expect(boundaries(text).has(out.length)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves text that fits untouched', () => {
    fc.assert(
      fc.property(anyText, units, (text, unit) => {
        const size = measure(text, unit);
        expect(truncate(text, size, unit)).toBe(text);
        expect(prefix(text, size, unit)).toBe(text);
      }),
    );
  });

  it('makes any text well-formed without changing its length or its well-formed parts', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const out = wellFormed(text);
        expect(out.length).toBe(text.length);
        expect(hasLoneSurrogate(out)).toBe(false);
        expect(Buffer.from(out, 'utf8').toString('utf8')).toBe(out);
        if (!hasLoneSurrogate(text)) expect(out).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });
});

/** Pieces that make cluster rules bite: CR LF, combining marks, ZWJ emoji, flags, Hangul jamo, CJK. */
const TRICKY = [
  'a',
  'Z',
  ' ',
  '\n',
  '\r\n',
  '\r',
  'e\u0301',
  '\u0301',
  '👩\u200d💻',
  '\u200d',
  '🇫🇷',
  '🇩',
  '\u1100\u1161\u11a8',
  '中',
  '文',
  '©',
  'x'.repeat(300),
  '中'.repeat(200),
];
const longText = fc
  .array(fc.constantFrom(...TRICKY), { minLength: 50, maxLength: 400 })
  .map((parts) => parts.join(''));

describe('cutting long text (segmented in pieces)', () => {
  it('cuts where the whole-text segmenter would, on texts longer than a piece', () => {
    fc.assert(
      fc.property(longText, fc.integer({ min: 1, max: 12_000 }), units, (text, max, unit) => {
        const out = prefix(text, max, unit);
        const first = [...segmenter.segment(text)][0]?.segment ?? '';
        if (measure(first, unit) > max) return;
        // The reference: the longest start ending on a boundary of the whole text that fits.
        let best = 0;
        for (const b of boundaries(text)) if (b > best && measure(text.slice(0, b), unit) <= max) best = b;
        expect(out.length).toBe(best);
      }),
      { numRuns: 150 },
    );
  });

  it('cuts a 128 KB text to its first 64 KB (an email body cap), ending with the ellipsis', () => {
    const text = 'x'.repeat(128 * 1024);
    const out = truncate(text, 64 * 1024, 'bytes');
    expect(measure(out, 'bytes')).toBe(64 * 1024);
    expect(out.endsWith(ELLIPSIS)).toBe(true);
  });
});

describe('cutting text (examples)', () => {
  it('keeps a flag, a skin tone and a family whole or drops them whole', () => {
    expect(prefix('ok 🇫🇷', 4)).toBe('ok ');
    expect(prefix('👍🏽👍🏽', 5)).toBe('👍🏽');
    expect(truncate('done 👨‍👩‍👧‍👦 yes', 10)).toBe('done …');
  });

  it('cuts a single cluster longer than the room between code points', () => {
    const zalgo = `e${'\u0301'.repeat(50)}`;
    expect(prefix(zalgo, 5)).toBe(zalgo.slice(0, 5));
  });

  it('finds lone surrogates at either end and replaces them with U+FFFD', () => {
    expect(hasLoneSurrogate('a\ud83d')).toBe(true);
    expect(hasLoneSurrogate('\ude80a')).toBe(true);
    expect(hasLoneSurrogate('🚀')).toBe(false);
    expect(wellFormed('x\ud83d')).toBe('x\ufffd');
  });
});
