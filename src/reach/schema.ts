import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { prefix } from '../text/index.js';

/**
 * Tool input schemas: compiled once at start-up (Ajv, strict, draft-07: the dialect the MCP SDK
 * advertises in `tools/list`), closed by default, and failures phrased so a model can fix its call.
 * The seed's opening failure — a string where an array belonged, and a 500 from the backend — becomes
 * `params.tags must be an array; you sent a string ("urgent")` before anything runs.
 */

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

/** One Ajv for every tool: compiled validators are cached per schema object, formats loaded once. */
const ajv = addFormats(
  new Ajv({
    allErrors: true,
    strict: true,
    // `type: [string, null]` is common in hand-written schemas and means exactly what it says.
    allowUnionTypes: true,
    useDefaults: true,
    coerceTypes: false,
    // Strict mode's warnings go to console by default; a schema problem is a start-up error instead.
    logger: false,
  }),
);

export type JsonSchema = Record<string, unknown>;

/**
 * The schema with `additionalProperties: false` on every object schema that lists `properties` and
 * does not say otherwise (seed §3.3: unknown fields are refused, not ignored). A copy: the config's
 * own object is left as written.
 */
export function closeSchema(schema: JsonSchema): JsonSchema {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      // `properties` maps names to schemas; `enum`, `const`, `default`, `examples` hold data, not schemas.
      if (k === 'properties' || k === 'patternProperties' || k === 'definitions' || k === '$defs') {
        out[k] = Object.fromEntries(
          Object.entries((v ?? {}) as Record<string, unknown>).map(([name, s]) => [name, visit(s)]),
        );
      } else if (k === 'enum' || k === 'const' || k === 'default' || k === 'examples') {
        out[k] = v;
      } else out[k] = visit(v);
    }
    const isObject = out.type === 'object' || (out.type === undefined && out.properties !== undefined);
    if (isObject && out.properties !== undefined && out.additionalProperties === undefined)
      out.additionalProperties = false;
    return out;
  };
  return visit(schema) as JsonSchema;
}

export type CompileResult =
  | { ok: true; schema: JsonSchema; validate: ValidateFunction; fillsDefaults: boolean }
  | { ok: false; message: string };

/** Compiles a tool's input schema; the top level must describe an object (params are named). */
export function compileInputSchema(schema: JsonSchema): CompileResult {
  if (schema.type !== 'object') {
    return { ok: false, message: 'the top level must be `type: object` (parameters are named)' };
  }
  const closed = closeSchema(schema);
  try {
    // Ajv writes defaults into the params it checks (`useDefaults`), nested ones into nested objects;
    // without a `default` anywhere it only reads them. Erring towards true (a property named
    // "default" counts) only costs a copy.
    const fillsDefaults = JSON.stringify(closed).includes('"default":');
    return { ok: true, schema: closed, validate: ajv.compile(closed), fillsDefaults };
  } catch (err) {
    return { ok: false, message: `does not compile: ${(err as Error).message}` };
  }
}

/** The property names the schema declares at its top level (what SQL and URL templates may name). */
export function topLevelFields(schema: JsonSchema): string[] {
  const props = schema.properties;
  return props && typeof props === 'object' ? Object.keys(props) : [];
}

export interface ParamProblem {
  /** `params.tags`, `params.items[2].qty`, or `params` for the object itself. */
  path: string;
  /** What is wrong and what to send instead, in one sentence. */
  message: string;
  keyword: string;
}

function pathOf(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = 'params';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : `.${p}`;
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  const t = typeof value;
  const shown = JSON.stringify(value);
  const short = shown !== undefined && shown.length > 40 ? `${prefix(shown, 37)}…` : shown;
  if (t === 'string') return `a string (${short})`;
  if (t === 'number') return Number.isInteger(value) ? `the integer ${short}` : `the number ${short}`;
  if (t === 'boolean') return `the boolean ${short}`;
  if (t === 'object') return 'an object';
  return t;
}

function valueAt(root: unknown, instancePath: string): unknown {
  let v = root;
  for (const p of instancePath.split('/').slice(1)) {
    const key = p.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

/** Ajv's errors as one problem each, in words a model acts on: the path, what it must be, what came. */
export function explain(errors: readonly ErrorObject[], params: unknown, allowed: string[]): ParamProblem[] {
  const out: ParamProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const p = e.params as Record<string, unknown>;
    const got = valueAt(params, e.instancePath);
    let path = pathOf(e.instancePath);
    let message: string;
    switch (e.keyword) {
      case 'required':
        path = pathOf(e.instancePath, String(p.missingProperty));
        message = 'is required; add it';
        break;
      case 'additionalProperties': {
        path = pathOf(e.instancePath, String(p.additionalProperty));
        const names = e.instancePath === '' ? allowed : [];
        message =
          names.length > 0
            ? `is not a parameter of this tool; remove it (the parameters are ${names.join(', ')})`
            : 'is not allowed here; remove it';
        break;
      }
      case 'type': {
        const want = String(p.type)
          .split(',')
          .map((t) => article(t))
          .join(' or ');
        message = `must be ${want}; you sent ${describe(got)}`;
        break;
      }
      case 'enum':
        message = `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}; you sent ${describe(got)}`;
        break;
      case 'const':
        message = `must be ${JSON.stringify(p.allowedValue)}; you sent ${describe(got)}`;
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        message = `must be ${String(p.comparison)} ${String(p.limit)}; you sent ${describe(got)}`;
        break;
      case 'minLength':
        message = `must have at least ${String(p.limit)} characters; you sent ${describe(got)}`;
        break;
      case 'maxLength':
        message = `must have at most ${String(p.limit)} characters; you sent ${describe(got)}`;
        break;
      case 'minItems':
        message = `must have at least ${String(p.limit)} items; you sent ${describe(got)}`;
        break;
      case 'maxItems':
        message = `must have at most ${String(p.limit)} items; you sent ${describe(got)}`;
        break;
      case 'pattern':
        message = `must match the pattern ${String(p.pattern)}; you sent ${describe(got)}`;
        break;
      case 'format':
        message = `must be a valid ${String(p.format)}; you sent ${describe(got)}`;
        break;
      default:
        message = `${e.message ?? 'is not valid'}; you sent ${describe(got)}`;
    }
    const key = `${path}\n${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message, keyword: e.keyword });
  }
  return out;
}

/** The problems as one line a model reads first: `params.limit must be …; params.x is not …`. */
export function problemsLine(problems: readonly ParamProblem[], max = 5): string {
  const shown = problems.slice(0, max).map((p) => `${p.path} ${p.message}`);
  const more = problems.length > max ? ` (and ${problems.length - max} more)` : '';
  return `${shown.join('; ')}${more}`;
}
