/**
 * The spans of SQL text in which `$1`, `?` or `:name` is not a parameter: string literals and quoted
 * identifiers (`''` and `""` escape themselves) and comments. Shared by the store's placeholder
 * rewrite (`sqlite-params.ts`) and reach's tool SQL (`reach/backends/sql-params.ts`).
 */

/**
 * The index just after the literal, quoted identifier or comment that begins at `i`; `i` itself when
 * none begins there; `text.length` when one never ends (the database refuses such a text anyway).
 */
export function skipQuoted(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x27 /* ' */ || c === 0x22 /* " */) {
    // A doubled quote is an escaped one: reading `'it''s'` as two adjacent literals ends in the same place.
    const end = text.indexOf(text[i] as string, i + 1);
    return end < 0 ? text.length : end + 1;
  }
  if (c === 0x2d /* - */ && text.charCodeAt(i + 1) === 0x2d) {
    const end = text.indexOf('\n', i + 2);
    return end < 0 ? text.length : end;
  }
  if (c === 0x2f /* / */ && text.charCodeAt(i + 1) === 0x2a /* * */) {
    const end = text.indexOf('*/', i + 2);
    return end < 0 ? text.length : end + 2;
  }
  return i;
}
