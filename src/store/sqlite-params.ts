import { skipQuoted } from './sql-lex.js';

/**
 * The port's SQL numbers its placeholders `$1 … $n` (PostgreSQL's form, so one text serves both
 * dialects). SQLite reads `$1` as a parameter *named* "1", which the driver binds from an object: a
 * property lookup per placeholder, and an object built per statement. Plain `?` placeholders bind from
 * the array as it is. Measured with better-sqlite3 12 on the 2-core VM, a 13-column, 200-row INSERT
 * bound ~37 % faster positionally (docs/ARCHITECTURE.md, "Where the time goes"), and every statement of
 * every request pays the named form. So each text is rewritten once: every `$n` outside a string
 * literal, a quoted identifier or a comment becomes `?`, and `order` says which value each `?` takes
 * (a `$n` used twice is bound twice).
 */

/** A statement's text with `?` placeholders, and the 0-based value index of each, in order. */
export interface Positional {
  text: string;
  order: readonly number[];
}

/**
 * More bound parameters than this and the named form stays (SQLite's default limit is 32,766; the
 * port's chunked statements stay far below it even with repeats).
 */
const MAX_POSITIONS = 30_000;

/**
 * The positional form of `text`, or undefined when it keeps the named one: it holds a `?` or a named
 * parameter of its own (`:x`, `@x`, `$x`), or too many placeholders. Literals, quoted identifiers and
 * comments are skipped (`sql-lex.ts`).
 */
export function positional(text: string): Positional | undefined {
  const order: number[] = [];
  let out = '';
  let from = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    const skipped = skipQuoted(text, i);
    if (skipped > i) {
      i = skipped;
    } else if (c === 0x3f /* ? */ || c === 0x3a /* : */ || c === 0x40 /* @ */) {
      // `?`, `:name` and `@name` are SQLite placeholders of their own; `::type` is PostgreSQL's cast,
      // which SQLite text never holds. Keep such a text as it is.
      if (c === 0x3f || isNameStart(text.charCodeAt(i + 1))) return undefined;
      i++;
    } else if (c === 0x24 /* $ */) {
      let j = i + 1;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      if (j === i + 1) return undefined; // `$name`
      order.push(Number(text.slice(i + 1, j)) - 1);
      if (order.length > MAX_POSITIONS) return undefined;
      out += `${text.slice(from, i)}?`;
      from = j;
      i = j;
    } else i++;
  }
  return { text: out + text.slice(from), order };
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isNameStart = (c: number) =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c >= 0x80;
