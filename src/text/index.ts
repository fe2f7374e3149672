/**
 * Pure text rules that notify (the content gate) and every channel (its templates) both apply:
 * mass-mention stripping and length caps. A leaf: it imports nothing.
 */

export const ELLIPSIS = '…';

// Each pattern is a way some provider turns text into a ping for a whole room. The word boundary
// keeps `@alice` and `@allison` intact (text.test.ts pins both).
const MASS_MENTIONS: RegExp[] = [
  /@(all|everyone|here|channel)\b/gi,
  /<!(channel|here|everyone)(\|[^>]*)?>/gi,
  /<at\s+(user_)?id\s*=\s*["']?(all|-1)["']?\s*>[^<]*<\/at>/gi,
  /<at\s+(user_)?id\s*=\s*["']?(all|-1)["']?\s*\/?>/gi,
  /@所有人/g,
];

/** Removes room-wide mentions; a mention of the owner is added by the channel from config only. */
export function stripMassMentions(text: string): string {
  // Every pattern above starts with `@` or `<`: text with neither has nothing to strip (most reports).
  if (!text.includes('@') && !text.includes('<')) return text;
  // Repeat until nothing changes: removing `@all` from `@@allall` must not leave a fresh `@all`.
  let out = text;
  for (let before = ''; before !== out; ) {
    before = out;
    for (const re of MASS_MENTIONS) out = out.replace(re, '');
  }
  return out;
}

export type LengthUnit = 'bytes' | 'chars';

export function measure(text: string, unit: LengthUnit): number {
  return unit === 'bytes' ? Buffer.byteLength(text, 'utf8') : text.length;
}

// One segmenter for the process: building one costs far more than a cut. Grapheme rules do not
// depend on the locale. Built on the first cut: it maps ICU's break-iterator data, ~2.5 MB of an idle
// gateway's resident memory that has cut nothing yet (docs/ARCHITECTURE.md "Idle memory").
let graphemes: Intl.Segmenter | undefined;
const segmenter = () => (graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' }));

/** Code units per piece `segments` hands the segmenter. */
const SEGMENT_PIECE = 2048;

/**
 * A UTF-16 unit no grapheme cluster can continue across, read from the two sides alone: Latin, the
 * other scripts below U+0300 and CJK ideographs are `Other`, `Control`, `CR` or `LF` in UAX #29, never
 * Extend, ZWJ, SpacingMark, Prepend, Hangul or a regional indicator, so between two of them there is
 * always a break (GB4, GB5, GB999) unless they are CR LF (GB3).
 */
function simple(c: number): boolean {
  return (c < 0x300 && c !== 0x0d) || (c >= 0x4e00 && c <= 0x9fff);
}

/**
 * Grapheme clusters of `text` with their UTF-16 index, as `graphemes.segment(text)` yields them,
 * segmented a piece at a time: V8's segmenter is quadratic in the length of the string it is given
 * (64 K characters take 1.5 s, 8 K take 30 ms, on this machine), and the email channel cuts 64 KB
 * bodies. Pieces end only between two `simple` units, where a cluster cannot continue, so the
 * clusters are the same; text with no such point stays one piece.
 */
function* segments(text: string): Generator<{ segment: string; index: number }> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + SEGMENT_PIECE);
    while (end < text.length && !(simple(text.charCodeAt(end - 1)) && simple(text.charCodeAt(end)))) end++;
    for (const { segment, index } of segmenter().segment(text.slice(start, end)))
      yield { segment, index: start + index };
    start = end;
  }
}

/**
 * The longest start of `text` that fits `max` in `unit`, cut between grapheme clusters, so a flag,
 * a skin tone or an accent is kept whole or dropped whole and no surrogate pair is ever split (a
 * lone surrogate is what RFC 8785 refuses, and an event that cannot be hashed is never delivered).
 * A single cluster longer than the room (a pile of combining marks) is cut between code points.
 */
export function prefix(text: string, max: number, unit: LengthUnit = 'chars'): string {
  if (max <= 0) return '';
  if (measure(text, unit) <= max) return text;
  let end = 0;
  let used = 0;
  for (const { segment, index } of segments(text)) {
    const size = measure(segment, unit);
    if (used + size > max) {
      if (end === 0) return codePointPrefix(segment, max, unit);
      break;
    }
    used += size;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

function codePointPrefix(text: string, max: number, unit: LengthUnit): string {
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = measure(ch, unit);
    if (used + size > max) break;
    out += ch;
    used += size;
  }
  return out;
}

/**
 * Cuts `text` so that it fits `max` in `unit`, ending with an ellipsis when cut; cuts between
 * grapheme clusters (see `prefix`). Chars are UTF-16 units, the stricter count for Telegram and
 * Discord. Every length cap on text that reaches a person or the log goes through here or `prefix`
 * (text.test.ts holds the properties: fits, well-formed, a prefix of the input).
 */
export function truncate(text: string, max: number, unit: LengthUnit = 'chars'): string {
  if (measure(text, unit) <= max) return text;
  const room = max - measure(ELLIPSIS, unit);
  if (room <= 0) return '';
  return prefix(text, room, unit) + ELLIPSIS;
}

/**
 * True when `text` holds a UTF-16 surrogate without its pair: not Unicode, and not RFC 8785 JSON.
 * The engine's `isWellFormed` (ES2024, in Node 20) scans natively: a regular expression with a
 * lookbehind was ~3 % of a webhook's CPU on 7 KB bodies.
 */
export function hasLoneSurrogate(text: string): boolean {
  return !text.isWellFormed();
}

/**
 * `text` with every lone surrogate replaced by U+FFFD (`String.prototype.toWellFormed`): for text
 * whose sender we must accept as is (a signed webhook), so what we derive from it can still be hashed
 * and delivered.
 */
export function wellFormed(text: string): string {
  return text.toWellFormed();
}
