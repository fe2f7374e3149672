import { hasLoneSurrogate, wellFormed } from '../text/index.js';

/**
 * Reading JSON that arrives from outside. `JSON.parse` accepts more than the rest of the gateway can
 * hold: nesting deep enough to overflow every recursive consumer (zod, CEL, RFC 8785, a template),
 * strings with lone UTF-16 surrogates (`"\ud800"` is valid JSON, but not Unicode, and RFC 8785
 * refuses it, so the event could never be hashed), and numbers beyond a double (`1e999` parses to
 * Infinity, which JSON cannot write back). Every request body goes through `readJsonText` (the
 * kernel's `readJson` and each route that parses for itself), so each of these is refused at the
 * door with one code, before anything is stored. json.test.ts holds the properties.
 */

/**
 * The deepest nesting accepted: 64 objects or arrays inside each other. No hook, webhook or
 * MCP payload we have seen goes past 20; 64 leaves room, and keeps every recursive walk over a
 * parsed body far from the stack's limit (about 10,000 frames).
 */
export const MAX_JSON_DEPTH = 64;

export type JsonProblemKind = 'too_deep' | 'lone_surrogate' | 'not_finite';

/** The catalogue code each problem answers with (src/errors/catalogue.ts). */
export const JSON_PROBLEM_CODE = {
  too_deep: 'json_too_deep',
  lone_surrogate: 'unrepresentable_json',
  not_finite: 'unrepresentable_json',
} as const satisfies Record<JsonProblemKind, string>;

export interface JsonProblem {
  kind: JsonProblemKind;
  /** Where, as `a.0.b` (`(root)` for the value itself). */
  path: string;
}

export type JsonRead =
  | { ok: true; value: unknown }
  | {
      ok: false;
      code: 'invalid_json' | 'json_too_deep' | 'unrepresentable_json';
      /** Safe to show the sender: says what and where, and how to fix it. */
      message: string;
    };

export interface JsonReadOptions {
  maxDepth?: number;
  /**
   * Replace what RFC 8785 cannot hold instead of refusing it: a lone surrogate becomes U+FFFD, a
   * number beyond a double becomes null. For a body whose signature was valid (a webhook): the
   * sender's bytes are kept verbatim in the vault, and what we derive from them is well-formed.
   * Nesting past `maxDepth` is refused either way.
   */
  repair?: boolean;
}

/** Parses JSON text from outside; never throws. */
export function readJsonText(text: string, opts: JsonReadOptions = {}): JsonRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, code: 'invalid_json', message: `not valid JSON: ${(err as Error).message}` };
  }
  // Most bodies cannot hold a lone surrogate (that needs every string visited): then only the
  // nesting is walked, with a look at each number on the way (a non-finite one sends the body to the
  // full walk, which repairs or refuses it).
  if (!mayHoldLoneSurrogate(text)) return depthOnly(value, opts);
  return checkJsonValue(value, opts);
}

/**
 * Whether JSON text could parse to a lone surrogate. A JavaScript string decoded from bytes (UTF-8,
 * as every body is) holds no lone surrogate itself, so one can only come from a `\uD800`–`\uDFFF`
 * escape. False means none is possible; true means "look".
 */
export function mayHoldLoneSurrogate(text: string): boolean {
  return (text.includes('\\u') && SURROGATE_ESCAPE.test(text)) || hasLoneSurrogate(text);
}

// `\\u` then D8–DF: a surrogate escape.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** What the nesting walk found: nothing, nesting past the limit, or a number past a double. */
const FINE = 0;
const TOO_DEEP = 1;
const NOT_FINITE = 2;

/**
 * The nesting, and every number's finiteness on the way: `JSON.parse` gives ±Infinity for a literal
 * past a double, which only the full walk repairs or names. A type check per number costs less than
 * scanning the text for such literals did (a regex over the 7 KB webhook, ~2.5 % of its CPU).
 */
function depthOnly(value: unknown, opts: JsonReadOptions): JsonRead {
  const maxDepth = opts.maxDepth ?? MAX_JSON_DEPTH;
  const path: (string | number)[] = [];
  const deep = (v: unknown, depth: number): number => {
    if (typeof v !== 'object' || v === null)
      return typeof v === 'number' && !Number.isFinite(v) ? NOT_FINITE : FINE;
    if (depth >= maxDepth) return TOO_DEEP;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        const found = deep(v[i], depth + 1);
        if (found !== FINE) return found;
        path.pop();
      }
      return FINE;
    }
    for (const k in v) {
      path.push(k);
      const found = deep((v as Record<string, unknown>)[k], depth + 1);
      if (found !== FINE) return found;
      path.pop();
    }
    return FINE;
  };
  const found = deep(value, 0);
  if (found === FINE) return { ok: true, value };
  // Whatever comes first in the walk's order, the full walk names it, as it would have anyway.
  if (found === NOT_FINITE) return checkJsonValue(value, opts);
  const problem: JsonProblem = { kind: 'too_deep', path: show(path) };
  return { ok: false, code: JSON_PROBLEM_CODE.too_deep, message: describeJsonProblem(problem, maxDepth) };
}

/** The same checks on a value already parsed (by an SDK, or from a form field). */
export function checkJsonValue(value: unknown, opts: JsonReadOptions = {}): JsonRead {
  const maxDepth = opts.maxDepth ?? MAX_JSON_DEPTH;
  const found = opts.repair ? repairJson(value, maxDepth) : { value, problem: jsonProblem(value, maxDepth) };
  if (!found.problem) return { ok: true, value: found.value };
  return {
    ok: false,
    code: JSON_PROBLEM_CODE[found.problem.kind],
    message: describeJsonProblem(found.problem, maxDepth),
  };
}

export function describeJsonProblem(problem: JsonProblem, maxDepth = MAX_JSON_DEPTH): string {
  const at = wellFormed(problem.path);
  switch (problem.kind) {
    case 'too_deep':
      return `nested deeper than ${maxDepth} levels at ${at}; flatten it`;
    case 'lone_surrogate':
      return `a string at ${at} holds a lone UTF-16 surrogate (half of a pair, e.g. "\\ud83d" without its second half): not Unicode, so it cannot be hashed (RFC 8785); send whole characters`;
    case 'not_finite':
      return `a number at ${at} is beyond the range of a double (e.g. 1e999): JSON cannot carry it; send it as a string`;
  }
}

/** The first thing in `value` that RFC 8785 cannot canonicalize or that is nested past `maxDepth`. */
export function jsonProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonProblem | undefined {
  // One path stack for the whole walk (nothing allocated per value); recursion is bounded by
  // maxDepth, so the walk cannot overflow the stack itself.
  const path: (string | number)[] = [];
  const walk = (v: unknown, depth: number): JsonProblemKind | undefined => {
    if (typeof v === 'string') return hasLoneSurrogate(v) ? 'lone_surrogate' : undefined;
    if (typeof v === 'number') return Number.isFinite(v) ? undefined : 'not_finite';
    if (typeof v !== 'object' || v === null) return undefined;
    if (depth >= maxDepth) return 'too_deep';
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        const p = walk(v[i], depth + 1);
        if (p) return p;
        path.pop();
      }
      return undefined;
    }
    for (const k in v) {
      path.push(k);
      if (hasLoneSurrogate(k)) return 'lone_surrogate';
      const p = walk((v as Record<string, unknown>)[k], depth + 1);
      if (p) return p;
      path.pop();
    }
    return undefined;
  };
  const kind = walk(value, 0);
  return kind ? { kind, path: show(path) } : undefined;
}

/** In place (the value was just parsed and is ours): repairs surrogates and numbers, reports depth. */
function repairJson(value: unknown, maxDepth: number): { value: unknown; problem?: JsonProblem } {
  let problem: JsonProblem | undefined;
  const path: (string | number)[] = [];
  const fix = (v: unknown, depth: number): unknown => {
    if (problem) return v;
    if (typeof v === 'string') return wellFormed(v);
    if (typeof v === 'number') return Number.isFinite(v) ? v : null;
    if (typeof v !== 'object' || v === null) return v;
    if (depth >= maxDepth) {
      problem = { kind: 'too_deep', path: show(path) };
      return v;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        v[i] = fix(v[i], depth + 1);
        path.pop();
      }
      return v;
    }
    const record = v as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      path.push(k);
      const was = record[k];
      const item = fix(was, depth + 1);
      path.pop();
      const key = wellFormed(k);
      if (key === k && item === was) continue; // nothing to write: the common case
      if (key !== k) delete record[k];
      // defineProperty, not assignment: a parsed "__proto__" is an own key, and `record[k] = …`
      // would set the prototype instead.
      Object.defineProperty(record, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return v;
  };
  const fixed = fix(value, 0);
  return problem ? { value: fixed, problem } : { value: fixed };
}

function show(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(root)' : path.join('.');
}
