import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
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
    raw = parseYaml(readFileSync(path, 'utf8'), path);
  }
  return { config: parseConfigWith(spec, applyEnv(raw, env), source), source };
}

/** Validates `raw` against the spec's schema, then its checks; throws ConfigError listing every problem. */
export function parseConfigWith<C extends CoreConfig>(
  spec: ConfigSpec<C>,
  raw: unknown,
  source = 'config',
): C {
  const result = spec.schema.safeParse(raw);
  if (!result.success) throw new ConfigError(source, describeIssues(result.error.issues));
  const problems = (spec.checks ?? []).flatMap((check) => check(result.data));
  if (problems.length > 0) throw new ConfigError(source, problems);
  return result.data;
}

function parseYaml(text: string, path: string): Record<string, unknown> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
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
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(path, [
      { path: '(root)', message: 'the config must be a YAML mapping (key: value pairs)' },
    ]);
  }
  return value as Record<string, unknown>;
}

function keyPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

export function describeIssues(issues: readonly z.core.$ZodIssue[]): ConfigProblem[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: keyPath([...issue.path, key]),
        message: 'unknown key; remove it or check its spelling against docs/config.md',
      }));
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
