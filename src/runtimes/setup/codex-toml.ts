import { isDeepStrictEqual } from 'node:util';

/**
 * Sets the top-level `notify` key of Codex's config.toml (reference/runtimes.md §2.2) by editing the
 * text, not by parsing and re-serializing it: there is no TOML library here, and a rewrite would lose the
 * user's comments and layout. A small scanner finds where the top-level keys end (the first `[table]`
 * header outside any string or array) and whether `notify` is already one of them.
 */

export const DEFAULT_NOTIFY_ARGV = ['switchboard', 'hook', 'codex'] as const;

export type NotifyEdit =
  | { kind: 'ok'; text: string; changed: boolean }
  /** A `notify` that is not Switchboard's: left as it is (Codex runs one program only). */
  | { kind: 'conflict'; existing: string }
  | { kind: 'invalid'; problem: string };

interface Statement {
  key: string;
  /** Offsets into the text: start of the line's content, start and end of the value, end of the line. */
  start: number;
  valueStart: number;
  valueEnd: number;
  end: number;
}

interface Scan {
  statements: Statement[];
  /** Offset of the line holding the first table header, when there is one. */
  header?: number;
}

class ScanError extends Error {}

/** Skips a string starting at `i` (any of TOML's four kinds) and returns the offset after it. */
function skipString(text: string, i: number): number {
  const triple = text.startsWith('"""', i) || text.startsWith("'''", i);
  const quote = text[i] as '"' | "'";
  const basic = quote === '"';
  let j = i + (triple ? 3 : 1);
  while (j < text.length) {
    const c = text[j];
    if (basic && c === '\\') {
      j += 2;
      continue;
    }
    if (!triple && (c === '\n' || c === '\r')) break;
    if (triple ? text.startsWith(quote.repeat(3), j) : c === quote) {
      // A closing triple may carry up to two more quotes of content (`""""` ends with one `"` inside).
      let k = j + (triple ? 3 : 1);
      while (triple && text[k] === quote && k < j + 5) k++;
      return k;
    }
    j++;
  }
  throw new ScanError(`unterminated string at offset ${i}`);
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';
const lineEnd = (text: string, i: number) => {
  const n = text.indexOf('\n', i);
  return n === -1 ? text.length : n + 1;
};

/** Scans one `key = value` from `start`; the value may span lines inside brackets or multi-line strings. */
function statementAt(text: string, start: number): Statement {
  let i = start;
  while (i < text.length && text[i] !== '=') {
    if (text[i] === '"' || text[i] === "'") i = skipString(text, i);
    else if (text[i] === '\n' || text[i] === '#')
      throw new ScanError(`a line without "=" at offset ${start}`);
    else i++;
  }
  if (i >= text.length) throw new ScanError(`a line without "=" at offset ${start}`);
  const key = text.slice(start, i).trim();
  i++;
  while (isBlank(text[i])) i++;
  const valueStart = i;
  let depth = 0;
  let valueEnd = i;
  while (i < text.length) {
    const c = text[i];
    if (c === '"' || c === "'") {
      i = skipString(text, i);
      valueEnd = i;
    } else if (c === '#') {
      i = lineEnd(text, i) - (text[lineEnd(text, i) - 1] === '\n' ? 1 : 0);
    } else if (c === '\n') {
      if (depth === 0) break;
      i++;
    } else {
      if (c === '[' || c === '{') depth++;
      if (c === ']' || c === '}') depth--;
      i++;
      if (!isBlank(c) && c !== '\r') valueEnd = i;
    }
  }
  if (depth !== 0) throw new ScanError(`an unclosed array or inline table after "${key}"`);
  return { key, start, valueStart, valueEnd, end: lineEnd(text, i) };
}

function scanTopLevel(text: string): Scan {
  const statements: Statement[] = [];
  let i = 0;
  while (i < text.length) {
    let j = i;
    while (isBlank(text[j])) j++;
    const c = text[j];
    if (c === '[') return { statements, header: i };
    if (c === undefined || c === '\n' || c === '\r' || c === '#') {
      i = lineEnd(text, j);
      continue;
    }
    const statement = statementAt(text, j);
    statements.push(statement);
    i = statement.end;
  }
  return { statements };
}

/** `notify`, quoted or not; `notify.x` (a table under that name) also counts, as a conflict. */
const isNotifyKey = (key: string) => /^(notify|"notify"|'notify')\s*(\.|$)/.test(key);
const isPlainNotify = (key: string) => /^(notify|"notify"|'notify')$/.test(key);

/** Reads a TOML array of plain strings (`["a", 'b']`, comments and newlines allowed); else undefined. */
export function parseStringArray(value: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  const skip = () => {
    for (;;) {
      while (i < value.length && /\s/.test(value[i] ?? '')) i++;
      if (value[i] !== '#') return;
      i = lineEnd(value, i);
    }
  };
  skip();
  if (value[i] !== '[') return undefined;
  i++;
  for (;;) {
    skip();
    if (value[i] === ']') return value.slice(i + 1).trim() === '' ? out : undefined;
    const c = value[i];
    if ((c !== '"' && c !== "'") || value.startsWith(c.repeat(3), i)) return undefined;
    let end: number;
    try {
      end = skipString(value, i);
    } catch {
      return undefined;
    }
    const raw = value.slice(i, end);
    if (c === "'") out.push(raw.slice(1, -1));
    else {
      try {
        // TOML's basic-string escapes are JSON's, bar two rare ones (\e, \U) that we simply do not read.
        out.push(JSON.parse(raw) as string);
      } catch {
        return undefined;
      }
    }
    i = end;
    skip();
    if (value[i] === ',') i++;
    else if (value[i] !== ']') return undefined;
  }
}

/** TOML's basic strings take JSON's escapes, so JSON.stringify writes a valid one. */
export const formatStringArray = (argv: readonly string[]) =>
  `[${argv.map((a) => JSON.stringify(a)).join(', ')}]`;

const SWITCHBOARD_BRIDGE = /(^|[\s/])switchboard(\.js)?\s+hook\s+codex\b/;

/** A shell-free bridge command as argv; undefined when it needs a shell (quotes, `$`, pipes…). */
export function bridgeArgv(command: string): string[] | undefined {
  if (/["'\\$`|&;<>(){}*?~]/.test(command)) return undefined;
  const argv = command.trim().split(/\s+/);
  return argv[0] ? argv : undefined;
}

export function setCodexNotify(text: string, argv: readonly string[] = DEFAULT_NOTIFY_ARGV): NotifyEdit {
  let scan: Scan;
  try {
    scan = scanTopLevel(text);
  } catch (e) {
    if (e instanceof ScanError) return { kind: 'invalid', problem: e.message };
    throw e;
  }
  const line = `notify = ${formatStringArray(argv)}`;
  const existing = scan.statements.find((s) => isNotifyKey(s.key));
  if (existing) {
    const raw = text.slice(existing.valueStart, existing.valueEnd);
    const current = isPlainNotify(existing.key) ? parseStringArray(raw) : undefined;
    if (current && isDeepStrictEqual(current, [...argv])) return { kind: 'ok', text, changed: false };
    if (!current || !SWITCHBOARD_BRIDGE.test(current.join(' '))) return { kind: 'conflict', existing: raw };
    // Our own notify with another bridge: replace the key and value, keep a trailing comment.
    return {
      kind: 'ok',
      text: text.slice(0, existing.start) + line + text.slice(existing.valueEnd),
      changed: true,
    };
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const last = scan.statements.at(-1);
  // After the last top-level key; with none, at the top when a table follows, else at the end.
  const at = last ? last.end : scan.header !== undefined ? 0 : text.length;
  const before = text.slice(0, at);
  const gap = before === '' || before.endsWith('\n') ? '' : eol;
  return { kind: 'ok', text: `${before}${gap}${line}${eol}${text.slice(at)}`, changed: true };
}

/** Hooks inline in config.toml (`[hooks]`, reference §2.3) would run beside hooks.json: worth a warning. */
export const configDefinesHooks = (text: string) => /^[ \t]*\[\[?[ \t]*hooks[ \t]*[.\]]/m.test(text);
