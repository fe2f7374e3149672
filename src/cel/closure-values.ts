/**
 * The values side of src/cel/closures.ts: cel-js 8's answers, as plain functions, for the values it
 * models (strings, bools, ints as BigInt, doubles, null, lists as Array, maps as plain objects and
 * Map), each UNSURE wherever cel-js would answer otherwise or throw. The generated code calls these
 * (`HELPERS`); closures.test.ts and src/gate/closures.test.ts pin them against cel-js. Split from
 * closures.ts (the code generator) at this seam to keep each file under ~600 lines.
 */
import { compiledPattern } from './patterns.js';

/** The closure does not know cel-js's answer here: run cel-js. */
export const UNSURE: unique symbol = Symbol('unsure');
type Value = unknown;

/** A CEL parameter type a closure checks a helper's argument against. */
export type ParamType = 'string' | 'dyn' | 'map' | 'list' | 'bool' | 'int';
/** A helper the closure may call directly: its overloads (parameter types, handler). */
export type ClosureFunction = ReadonlyArray<{
  params: readonly ParamType[];
  fn: (...args: never[]) => unknown;
}>;
export const PARAM_TYPES = new Set<string>(['string', 'dyn', 'map', 'list', 'bool', 'int']);

const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;

/** Whether cel-js's `dyn` accepts the value without a registered object type (registry.js valueTypeMatchers). */
function plainValue(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'bigint':
    case 'number':
    case 'boolean':
      return true;
    case 'object': {
      if (v === null) return true;
      const c = (v as object).constructor;
      return c === undefined || c === Object || c === Map || c === Array || c === Set;
    }
    default:
      return false;
  }
}

/** A CEL map as cel-js sees one: a Map, or an object whose constructor is Object or none. */
function isMap(v: unknown): v is Record<string, unknown> | Map<unknown, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const c = (v as object).constructor;
  return c === undefined || c === Object || c === Map;
}

/** A field of a map as cel-js reads it; UNSURE where cel-js throws (no such key, a value it refuses). */
function field(obj: unknown, key: string): Value {
  if (typeof obj !== 'object' || obj === null) return UNSURE;
  // The plain object first: inputs and args are; `instanceof` walks a prototype chain.
  const c = obj.constructor;
  let v: unknown;
  if (c === Object || c === undefined)
    v = Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
  else if (c === Map) v = (obj as Map<unknown, unknown>).get(key);
  else return UNSURE;
  if (typeof v === 'string') return v;
  return v === undefined || !plainValue(v) ? UNSURE : v;
}

export const isPrimitive = (v: unknown) =>
  v === null ||
  typeof v === 'string' ||
  typeof v === 'boolean' ||
  typeof v === 'bigint' ||
  typeof v === 'number';

/** `==` over primitives as cel-js gives it: ints equal doubles by value, other kinds never equal. */
function equals(a: unknown, b: unknown): Value {
  if (!isPrimitive(a) || !isPrimitive(b)) return UNSURE;
  if (typeof a === typeof b) return a === b;
  if ((typeof a === 'bigint' && typeof b === 'number') || (typeof a === 'number' && typeof b === 'bigint'))
    // biome-ignore lint/suspicious/noDoubleEquals: CEL compares an int and a double by value
    return a == b;
  return false;
}

/** Whether an argument fits a helper's parameter type as cel-js's overload lookup sees it. */
function fits(type: ParamType, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'int':
      return typeof v === 'bigint';
    // cel-js probes a dynamic argument's type through its first element (probeOk)
    case 'map':
      return isMap(v) && probeOk(v);
    case 'list':
      return Array.isArray(v) && probeOk(v);
    case 'dyn':
      return probeOk(v);
  }
}

/** `<` and friends: both strings, both bools, or both numbers (int, double, mixed). */
function orderable(a: unknown, b: unknown): boolean {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === 'string' || ta === 'boolean') return ta === tb;
  return (ta === 'bigint' || ta === 'number') && (tb === 'bigint' || tb === 'number');
}

/** Whether cel-js's deep type probe (the first element, recursively) accepts the value. */
function probeOk(v: unknown, depth = 0): boolean {
  if (depth > 32 || !plainValue(v)) return false;
  if (Array.isArray(v)) return v.length === 0 || v[0] === undefined || probeOk(v[0], depth + 1);
  if (v instanceof Map) {
    const first = v.entries().next();
    return first.done === true || (probeOk(first.value[0], depth + 1) && probeOk(first.value[1], depth + 1));
  }
  if (isMap(v)) {
    for (const key in v) return probeOk((v as Record<string, unknown>)[key], depth + 1);
    return true;
  }
  return !(v instanceof Set);
}

/** `needle in haystack` where cel-js's answer is known: a same-kind primitive list, or a string key of a map. */
function contains(needle: unknown, haystack: unknown): Value {
  if (Array.isArray(haystack)) {
    const t = typeof needle;
    if (t !== 'string' && t !== 'boolean' && t !== 'bigint') return UNSURE;
    for (const e of haystack) if (typeof e !== t) return UNSURE;
    return haystack.includes(needle);
  }
  if (typeof needle !== 'string' || !isMap(haystack) || !probeOk(haystack)) return UNSURE;
  if (haystack instanceof Map) return haystack.get(needle) !== undefined;
  return Object.hasOwn(haystack, needle)
    ? (haystack as Record<string, unknown>)[needle] !== undefined
    : false;
}

/** `a.matches(b)` as cel-js gives it; an invalid pattern is cel-js's error. */
function matches(a: string, b: string): Value {
  try {
    return compiledPattern(b).test(a);
  } catch {
    return UNSURE;
  }
}

/** `+` and `-` where cel-js's answer is known: ints within int64, doubles, and `+` of strings. */
function arith(a: unknown, b: unknown, minus: boolean): Value {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    const v = minus ? a - b : a + b;
    return v > MAX_INT || v < MIN_INT ? UNSURE : v;
  }
  if (typeof a === 'number' && typeof b === 'number') return minus ? a - b : a + b;
  if (!minus && typeof a === 'string' && typeof b === 'string') return a + b;
  return UNSURE;
}

/** A helper called by the arguments' runtime types, as cel-js picks the overload; exactly one must fit. */
function call(overloads: ClosureFunction, values: unknown[]): Value {
  let fn: ((...a: unknown[]) => unknown) | undefined;
  for (const o of overloads) {
    if (!o.params.every((t, i) => fits(t, values[i]))) continue;
    if (fn) return UNSURE;
    fn = o.fn as (...a: unknown[]) => unknown;
  }
  if (!fn) return UNSURE;
  try {
    const out = fn(...values);
    return plainValue(out) ? out : UNSURE;
  } catch {
    return UNSURE;
  }
}

/** `has(x.a.b)` from x: true when the last field is present; a missing middle one is cel-js's error. */
function hasChain(obj: unknown, keys: readonly string[]): Value {
  for (let i = 0; i < keys.length; i++) {
    const last = i === keys.length - 1;
    if (!isMap(obj)) {
      // cel-js's field probe on a string, number, bool, null or list finds nothing
      if (last && (isPrimitive(obj) || Array.isArray(obj))) return false;
      return UNSURE;
    }
    const key = keys[i]!;
    const v =
      obj instanceof Map
        ? obj.get(key)
        : Object.hasOwn(obj, key)
          ? (obj as Record<string, unknown>)[key]
          : undefined;
    if (v === undefined) return last ? false : UNSURE;
    if (!plainValue(v)) return UNSURE;
    obj = v;
  }
  return true;
}

/** What generated code calls; passed in, never reached through a global. */
export const HELPERS = {
  U: UNSURE,
  plainValue,
  isMap,
  probeOk,
  field,
  equals,
  orderable,
  contains,
  matches,
  arith,
  call,
  hasChain,
};
