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
  return checkJsonValue(value, opts);
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
  // Recursion is bounded by maxDepth, so this walk cannot overflow the stack itself.
  const walk = (v: unknown, depth: number, path: Path): JsonProblem | undefined => {
    if (typeof v === 'string')
      return hasLoneSurrogate(v) ? { kind: 'lone_surrogate', path: show(path) } : undefined;
    if (typeof v === 'number')
      return Number.isFinite(v) ? undefined : { kind: 'not_finite', path: show(path) };
    if (typeof v !== 'object' || v === null) return undefined;
    if (depth >= maxDepth) return { kind: 'too_deep', path: show(path) };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const p = walk(v[i], depth + 1, { up: path, key: i });
        if (p) return p;
      }
      return undefined;
    }
    for (const [k, item] of Object.entries(v)) {
      if (hasLoneSurrogate(k)) return { kind: 'lone_surrogate', path: show({ up: path, key: k }) };
      const p = walk(item, depth + 1, { up: path, key: k });
      if (p) return p;
    }
    return undefined;
  };
  return walk(value, 0, undefined);
}

/** In place (the value was just parsed and is ours): repairs surrogates and numbers, reports depth. */
function repairJson(value: unknown, maxDepth: number): { value: unknown; problem?: JsonProblem } {
  let problem: JsonProblem | undefined;
  const fix = (v: unknown, depth: number, path: Path): unknown => {
    if (problem) return v;
    if (typeof v === 'string') return wellFormed(v);
    if (typeof v === 'number') return Number.isFinite(v) ? v : null;
    if (typeof v !== 'object' || v === null) return v;
    if (depth >= maxDepth) {
      problem = { kind: 'too_deep', path: show(path) };
      return v;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = fix(v[i], depth + 1, { up: path, key: i });
      return v;
    }
    const record = v as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      const item = fix(record[k], depth + 1, { up: path, key: k });
      const key = wellFormed(k);
      if (key !== k) delete record[k];
      Object.defineProperty(record, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return v;
  };
  const fixed = fix(value, 0, undefined);
  return problem ? { value: fixed, problem } : { value: fixed };
}

/** Where a walk is, as a chain up to the root: nothing is built for the nodes that are fine. */
type Path = { up: Path; key: string | number } | undefined;

function show(path: Path): string {
  const keys: (string | number)[] = [];
  for (let at = path; at; at = at.up) keys.unshift(at.key);
  return keys.length === 0 ? '(root)' : keys.join('.');
}
