/**
 * What a scanner must see instead of the text as typed: a token with a zero-width space, a soft
 * hyphen or a word joiner inside it looks like a token to a person and to a chat app (which renders
 * the invisible characters as nothing) but not to a pattern; a token in fullwidth letters (ＡＫＩＡ…)
 * is the same token after NFKC. So the scanner reads the text with every invisible format character
 * removed and each remaining code point in its NFKC form, and maps what it finds back to the original
 * offsets, so the mask covers the token and the characters hidden in it.
 */

/**
 * Characters that render as nothing: the Unicode format category (ZWSP U+200B, ZWNJ, ZWJ, soft hyphen
 * U+00AD, word joiner U+2060, BOM U+FEFF, bidi controls, tag characters U+E0000–E007F, U+180E), the
 * combining grapheme joiner U+034F, variation selectors, and the Hangul fillers that render blank.
 */
// One code point is tested at a time, so alternatives rather than a class (a class mixing combining
// marks trips the linter's misleading-class rule).
const INVISIBLE = /^(?:\p{Cf}|\u034F|[\u115F\u1160\u3164\uFFA0]|\p{Variation_Selector})$/u;

/** Text with nothing to strip or fold: ASCII only. Most messages are; they skip the mapping. */
const PLAIN = /^[\x20-\x7e\t\n\r]*$/;

export interface ScanText {
  /** The text the patterns run on. */
  text: string;
  /** Maps an offset in `text` back to the original: `toOriginal(start)`, `toOriginal(end, true)`. */
  toOriginal(offset: number, isEnd?: boolean): number;
}

/** What each non-ASCII code point becomes; text in one script repeats the same few hundred. */
const FOLDED = new Map<string, string>();
const FOLDED_MAX = 8192;

function fold(cp: string): string {
  let f = FOLDED.get(cp);
  if (f === undefined) {
    f = INVISIBLE.test(cp) ? '' : cp.normalize('NFKC');
    if (FOLDED.size < FOLDED_MAX) FOLDED.set(cp, f);
  }
  return f;
}

/** Strips invisible characters and folds each code point with NFKC, keeping a map of offsets. */
export function scanText(original: string): ScanText {
  if (PLAIN.test(original)) return { text: original, toOriginal: (o) => o };
  let text = '';
  // starts[i] / ends[i]: the original span of the code point that produced text[i].
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  for (const cp of original) {
    const from = i;
    i += cp.length;
    const folded = cp.length === 1 && cp < '\x7f' ? cp : fold(cp);
    for (let k = 0; k < folded.length; k++) {
      starts.push(from);
      ends.push(i);
    }
    text += folded;
  }
  return {
    text,
    toOriginal(offset, isEnd = false) {
      if (isEnd) return offset === 0 ? (starts[0] ?? 0) : (ends[offset - 1] ?? original.length);
      return starts[offset] ?? original.length;
    },
  };
}

/** The text as the scanner reads it: for tests that ask whether a secret survives in some output. */
export function foldForScan(text: string): string {
  return scanText(text).text;
}
