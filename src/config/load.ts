import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Document, isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { applyEnv } from './env.js';
import { type CoreConfig, coreConfigSchema } from './schema.js';

export interface ConfigProblem {
  path: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: ConfigProblem[],
  ) {
    super(
      `${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

/** A check across keys, run on the parsed config (a route naming a channel that exists). */
export type ConfigCheck = (config: CoreConfig) => ConfigProblem[];

/** The schema to validate with and the checks to run after it: the app root assembles them from modules. */
export interface ConfigSpec<C extends CoreConfig = CoreConfig> {
  schema: z.ZodType<C>;
  checks?: ConfigCheck[];
}

export interface LoadedConfig<C extends CoreConfig = CoreConfig> {
  config: C;
  /** The file read, or `built-in defaults`. */
  source: string;
}

/** The core's keys only (commands that need no module, and tests of the core). */
export const CORE_CONFIG: ConfigSpec = { schema: coreConfigSchema };

/** Resolves the config path: SWITCHBOARD_CONFIG, else ./switchboard.yaml when present, else none. */
export function configPath(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string | undefined {
  if (env.SWITCHBOARD_CONFIG) return resolve(cwd, env.SWITCHBOARD_CONFIG);
  const local = resolve(cwd, 'switchboard.yaml');
  return existsSync(local) ? local : undefined;
}

/** Defaults → file → env, validated once. Throws ConfigError listing every problem. */
export function loadConfigWith<C extends CoreConfig>(
  spec: ConfigSpec<C>,
  opts: { path?: string | undefined; env?: NodeJS.ProcessEnv } = {},
): LoadedConfig<C> {
  const env = opts.env ?? process.env;
  const path = opts.path;
  let raw: Record<string, unknown> = {};
  let locate: KeyLocator | undefined;
  const source = path ?? 'built-in defaults';
  if (path) {
    if (!existsSync(path)) {
      throw new ConfigError(path, [
        {
          path: '(file)',
          message: 'not found; create one with `switchboard init` or unset SWITCHBOARD_CONFIG',
        },
      ]);
    }
    const parsed = parseYaml(readFileSync(path, 'utf8'), path);
    raw = parsed.value;
    locate = parsed.locate;
  }
  return { config: parseConfigWith(spec, applyEnv(raw, env), source, locate), source };
}

/** Validates `raw` against the spec's schema, then its checks; throws ConfigError listing every problem. */
export function parseConfigWith<C extends CoreConfig>(
  spec: ConfigSpec<C>,
  raw: unknown,
  source = 'config',
  locate?: KeyLocator,
): C {
  const result = spec.schema.safeParse(raw);
  if (!result.success)
    throw new ConfigError(source, describeIssues(result.error.issues, { schema: spec.schema, locate }));
  const problems = (spec.checks ?? []).flatMap((check) => check(result.data));
  if (problems.length > 0) throw new ConfigError(source, problems);
  return result.data;
}

/** The 1-based line of the key `key` in the mapping at `path`, when the file has it. */
export type KeyLocator = (path: readonly PropertyKey[], key: string) => number | undefined;

function parseYaml(text: string, path: string): { value: Record<string, unknown>; locate: KeyLocator } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      path,
      doc.errors.map((e) => ({
        path: e.linePos?.[0] ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '(yaml)',
        message: `${e.message.split('\n')[0]} — fix the YAML syntax`,
      })),
    );
  }
  const value = doc.toJS() as unknown;
  const locate = keyLocator(doc, lines);
  if (value === null || value === undefined) return { value: {}, locate };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(path, [
      { path: '(root)', message: 'the config must be a YAML mapping (key: value pairs)' },
    ]);
  }
  return { value: value as Record<string, unknown>, locate };
}

function keyLocator(doc: Document, lines: LineCounter): KeyLocator {
  return (path, key) => {
    const map = path.length === 0 ? doc.contents : doc.getIn(path as unknown[], true);
    if (!isMap(map)) return undefined;
    const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
    const offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
    return offset === undefined ? undefined : lines.linePos(offset).line;
  };
}

/** The keys a strict object accepts at `path` of the schema (through defaults, arrays and records). */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  type Def = {
    type: string;
    innerType?: unknown;
    in?: unknown;
    shape?: Record<string, unknown>;
    element?: unknown;
    valueType?: unknown;
  };
  const def = (s: unknown): Def | undefined => (s as { _zod?: { def?: Def } } | undefined)?._zod?.def;
  const unwrap = (s: unknown): unknown => {
    for (let d = def(s); d; d = def(s)) {
      if (d.innerType !== undefined) s = d.innerType;
      else if (d.type === 'pipe') s = d.in;
      else break;
    }
    return s;
  };
  let node = unwrap(schema);
  for (const p of path) {
    const d = def(node);
    if (d?.type === 'object') node = unwrap(d.shape?.[String(p)]);
    else if (d?.type === 'array') node = unwrap(d.element);
    else if (d?.type === 'record') node = unwrap(d.valueType);
    else return [];
  }
  const d = def(node);
  return d?.type === 'object' ? Object.keys(d.shape ?? {}) : [];
}

/** The known key closest to a misspelt one, if it is close enough to be what was meant. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

function keyPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  ctx: { schema?: z.ZodType; locate?: KeyLocator | undefined } = {},
): ConfigProblem[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = ctx.schema ? keysAt(ctx.schema, issue.path) : [];
      return issue.keys.map((key) => {
        const line = ctx.locate?.(issue.path, key);
        const near = nearestKey(key, known);
        return {
          path: keyPath([...issue.path, key]),
          message: `unknown key${line ? ` (line ${line})` : ''}; ${near ? `did you mean ${near}? ` : ''}remove it or check its spelling against docs/config.md`,
        };
      });
    }
    if (issue.code === 'invalid_type') {
      const got =
        issue.input === undefined ? 'nothing' : Array.isArray(issue.input) ? 'a list' : typeof issue.input;
      return [{ path: keyPath(issue.path), message: `expected ${issue.expected}, got ${got}` }];
    }
    if (issue.code === 'invalid_value') {
      return [
        {
          path: keyPath(issue.path),
          message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`,
        },
      ];
    }
    return [{ path: keyPath(issue.path), message: issue.message }];
  });
}
