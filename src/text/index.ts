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

/**
 * Cuts `text` so that it fits `max` in `unit`, ending with an ellipsis when cut. Never splits a
 * surrogate pair (chars are UTF-16 units, the stricter count for Telegram and Discord).
 */
export function truncate(text: string, max: number, unit: LengthUnit): string {
  if (measure(text, unit) <= max) return text;
  const room = max - measure(ELLIPSIS, unit);
  if (room <= 0) return '';
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = measure(ch, unit);
    if (used + size > room) break;
    out += ch;
    used += size;
  }
  return out + ELLIPSIS;
}
