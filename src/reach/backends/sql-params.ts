/**
 * Named parameters in a tool's SQL (`WHERE status = :status`): found once at start-up, bound by name
 * at every call, never spliced into the text. A scanner, not a regex, so `':x'` in a string literal,
 * `-- :x` in a comment and PostgreSQL's `::int` cast are not parameters.
 */

import { skipQuoted } from '../../store/sql-lex.js';

export interface SqlTemplate {
  /** Distinct names, in first-use order. */
  names: string[];
  /** The text with `:name` replaced by `$1…$n` (PostgreSQL); the same name gets the same number. */
  positional: string;
  /** `?` or `$1` markers outside literals: positional parameters, which tool SQL must not use. */
  positionalMarkers: number;
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

export function parseSql(text: string): SqlTemplate {
  const names: string[] = [];
  let out = '';
  let markers = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    // String literals, quoted identifiers and comments are copied as they are (`store/sql-lex.ts`).
    const skipped = skipQuoted(text, i);
    if (skipped > i) {
      out += text.slice(i, skipped);
      i = skipped;
      continue;
    }
    // PostgreSQL dollar quoting ($$…$$, $tag$…$tag$).
    if (c === '$' && next !== undefined && (next === '$' || NAME_START.test(next))) {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i));
      if (m) {
        const tag = m[0];
        const end = text.indexOf(tag, i + tag.length);
        const j = end === -1 ? n : end + tag.length;
        out += text.slice(i, j);
        i = j;
        continue;
      }
    }
    if (c === '$' && next !== undefined && /[0-9]/.test(next)) markers++;
    if (c === '?') markers++;
    if (c === ':' && next === ':') {
      out += '::';
      i += 2;
      continue;
    }
    if (c === ':' && next !== undefined && NAME_START.test(next)) {
      let j = i + 1;
      while (j < n && NAME_PART.test(text[j]!)) j++;
      const name = text.slice(i + 1, j);
      let at = names.indexOf(name);
      if (at === -1) {
        names.push(name);
        at = names.length - 1;
      }
      out += `$${at + 1}`;
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return { names, positional: out, positionalMarkers: markers };
}

/** A parameter value as a driver binds it: booleans as 1/0 for SQLite, objects and arrays as JSON text. */
export function bindValue(value: unknown, dialect: 'sqlite' | 'postgres'): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean' && dialect === 'sqlite') return value ? 1 : 0;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}
