import type { PiiKind } from './config.js';
import type { ContextReport } from './protocol.js';
import { type RedactionCounts, redactValue } from './redact.js';
import { tokenCount } from './tokens.js';
import { prefix } from '../text/index.js';

/**
 * The context processor (seed §4): a tool's raw answer never goes to the model as is. PII is
 * redacted first, then the result is shaped:
 *
 * - `raw`: everything (redacted): nothing left out.
 * - `head_tail`: the first and last `keep` items of every list longer than `2 × keep`, with a marker
 *   saying how many were left out between them — the seed's fix for the model that read only the
 *   last rows of 400.
 * - `summary`: how many items, the field names, counts of enum-like fields (≤ 12 distinct values),
 *   min/max of numeric ones, and the first `keep` rows — enough to decide the next step.
 *
 * In every mode rows are also rendered as `field: value` text (what MCP's text content carries), which costs fewer tokens
 * than nested JSON and is easier for a model to read. Tokens are counted on the JSON a naive
 * integration would paste (before) and on that text (after); both go on the completion event.
 */

export interface ContextOptions {
  mode: 'raw' | 'summary' | 'head_tail';
  keep: number;
  max_string: number;
  redact: readonly PiiKind[];
}

export interface Processed {
  data: unknown;
  text: string;
  report: ContextReport;
}

/** A field with at most this many distinct values over the rows is enum-like: its counts are shown. */
export const ENUM_LIKE_MAX = 12;

type Row = Record<string, unknown>;

const isRow = (v: unknown): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);

function cut(v: unknown, max: number): unknown {
  if (typeof v === 'string' && v.length > max) {
    const head = prefix(v, max);
    return `${head}… (${v.length - head.length} more characters)`;
  }
  if (Array.isArray(v)) return v.map((x) => cut(x, max));
  if (isRow(v)) {
    const out: Row = {};
    for (const [k, x] of Object.entries(v)) out[k] = cut(x, max);
    return out;
  }
  return v;
}

function headTail(list: unknown[], keep: number, max: number): { value: unknown; omitted: number } {
  if (list.length <= keep * 2) return { value: cut(list, max), omitted: 0 };
  const omitted = list.length - keep * 2;
  return {
    value: {
      total: list.length,
      omitted,
      note: `${omitted} of ${list.length} items left out between head and tail`,
      head: cut(list.slice(0, keep), max),
      tail: cut(list.slice(-keep), max),
    },
    omitted,
  };
}

function summarize(list: unknown[], keep: number, max: number): { value: unknown; omitted: number } {
  const rows = list.filter(isRow);
  const out: Row = { total: list.length };
  if (rows.length === list.length && rows.length > 0) {
    const fields = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    out.fields = fields;
    const counts: Record<string, Record<string, number>> = {};
    const ranges: Record<string, { min: number; max: number }> = {};
    for (const f of fields) {
      const values = rows.map((r) => r[f]).filter((v) => v !== undefined && v !== null);
      if (values.length > 0 && values.every((v) => typeof v === 'number')) {
        const nums = values as number[];
        ranges[f] = { min: Math.min(...nums), max: Math.max(...nums) };
        continue;
      }
      const tally = new Map<string, number>();
      for (const v of values) {
        if (typeof v !== 'string' && typeof v !== 'boolean') continue;
        const key = String(v);
        tally.set(key, (tally.get(key) ?? 0) + 1);
        if (tally.size > ENUM_LIKE_MAX) break;
      }
      // Enum-like: few distinct values that repeat (a title column of unique strings is not).
      if (tally.size > 0 && tally.size <= ENUM_LIKE_MAX && tally.size < values.length)
        counts[f] = Object.fromEntries([...tally.entries()].sort((a, b) => b[1] - a[1]));
    }
    if (Object.keys(counts).length > 0) out.counts = counts;
    if (Object.keys(ranges).length > 0) out.ranges = ranges;
  }
  const sample = list.slice(0, keep);
  out.sample = cut(sample, max);
  const omitted = list.length - sample.length;
  if (omitted > 0) out.note = `${sample.length} of ${list.length} items shown; counts and ranges cover all`;
  return { value: out, omitted };
}

/** Applies `fn` to the result if it is a list, else to each list-valued field of an object. */
function shapeLists(
  value: unknown,
  fn: (list: unknown[]) => { value: unknown; omitted: number },
  max: number,
): { value: unknown; total?: number; omitted: number } {
  if (Array.isArray(value)) {
    const r = fn(value);
    return { value: r.value, total: value.length, omitted: r.omitted };
  }
  if (isRow(value)) {
    const out: Row = {};
    let omitted = 0;
    let total: number | undefined;
    for (const [k, v] of Object.entries(value)) {
      if (Array.isArray(v)) {
        const r = fn(v);
        out[k] = r.value;
        omitted += r.omitted;
        total = (total ?? 0) + v.length;
      } else out[k] = cut(v, max);
    }
    return { value: out, ...(total !== undefined ? { total } : {}), omitted };
  }
  return { value: cut(value, max), omitted: 0 };
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function rowLine(r: Row): string {
  return Object.entries(r)
    .map(([k, v]) => `${k}: ${scalar(v)}`)
    .join(', ');
}

function renderList(list: unknown[], indent: string): string[] {
  return list.map((item) => `${indent}${isRow(item) ? rowLine(item) : scalar(item)}`);
}

/** `field: value` text: a row per line, lists of rows as lines, head/tail with its marker line. */
export function renderText(value: unknown, indent = ''): string {
  if (Array.isArray(value)) return renderList(value, indent).join('\n');
  if (!isRow(value)) return `${indent}${scalar(value)}`;
  if (Array.isArray(value.head) && Array.isArray(value.tail) && typeof value.omitted === 'number') {
    return [
      ...renderList(value.head, indent),
      `${indent}… ${value.omitted} of ${scalar(value.total)} items left out …`,
      ...renderList(value.tail, indent),
    ].join('\n');
  }
  const lines: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (Array.isArray(v) && v.length > 0 && v.some(isRow)) {
      lines.push(`${indent}${k}:`, renderText(v, `${indent}  `));
    } else if (isRow(v) && Object.values(v).some((x) => isRow(x) || Array.isArray(x))) {
      lines.push(`${indent}${k}:`, renderText(v, `${indent}  `));
    } else if (isRow(v)) {
      lines.push(`${indent}${k}: ${rowLine(v)}`);
    } else {
      lines.push(`${indent}${k}: ${Array.isArray(v) ? v.map(scalar).join(', ') : scalar(v)}`);
    }
  }
  return lines.join('\n');
}

export function processResult(raw: unknown, o: ContextOptions): Processed {
  const counts: RedactionCounts = {};
  const redacted = redactValue(raw, o.redact, counts);
  const before = typeof redacted === 'string' ? redacted : JSON.stringify(redacted ?? null);
  let data: unknown;
  let total: number | undefined;
  let omitted = 0;
  let text: string;
  if (o.mode === 'raw') {
    data = redacted;
    total = Array.isArray(redacted) ? redacted.length : undefined;
    text = renderText(redacted);
  } else {
    const shaped = shapeLists(
      redacted,
      (list) =>
        o.mode === 'head_tail' ? headTail(list, o.keep, o.max_string) : summarize(list, o.keep, o.max_string),
      o.max_string,
    );
    data = shaped.value;
    total = shaped.total;
    omitted = shaped.omitted;
    text = renderText(data);
  }
  const tokensBefore = tokenCount(before);
  const report: ContextReport = {
    mode: o.mode,
    ...(total !== undefined ? { total_items: total } : {}),
    ...(omitted > 0 ? { omitted_items: omitted } : {}),
    tokens_before: tokensBefore,
    tokens_after: text === before ? tokensBefore : tokenCount(text),
    redacted: counts as Record<string, number>,
  };
  return { data, text, report };
}
