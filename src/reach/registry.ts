import { isAbsolute, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { ConfigProblem } from '../config/load.js';
import type { Egress } from '../egress/index.js';
import { commandBackend } from './backends/command-tool.js';
import { fillUrl, httpBackend, urlFields } from './backends/http-tool.js';
import { parseSql } from './backends/sql-params.js';
import { postgresBackend, sqliteBackend, sqlTarget } from './backends/sql-tool.js';
import type { Backend } from './backends/types.js';
import {
  type Channel,
  type Permission,
  type PiiKind,
  type ToolConfig,
  timeoutOf,
  SYNC_ESTIMATE_LIMIT_MS,
} from './config.js';
import type { InProcessTool } from './inprocess.js';
import { inProcessOptions } from './inprocess.js';
import { TouchFailure, type ToolListing } from './protocol.js';
import { compileInputSchema, type JsonSchema, topLevelFields } from './schema.js';

/**
 * The registry: every tool compiled once at start-up — its schema closed and compiled, its SQL's
 * parameters and its URL's fields checked against the schema, its backend built. `checkTools` is the
 * pure part, run as the manifest's `checkConfig`, so a broken entry stops start-up with one line per
 * problem (`tools.ticket.query.sql.query: names :stauts, which input_schema does not declare`).
 */

export type ToolKind = 'http' | 'sql' | 'command' | 'module' | 'memory';

export interface Tool {
  name: string;
  kind: ToolKind;
  description: string;
  /** The closed schema, as validated and as listed. */
  inputSchema: JsonSchema;
  validate: ValidateFunction;
  /** Whether `validate` writes defaults into the params: only then is a touch's params copied first. */
  fillsDefaults: boolean;
  fields: string[];
  permission: Permission;
  timeoutMs: number;
  concurrency: number;
  channel: Channel;
  estimateMs: number | undefined;
  context: { mode: 'raw' | 'summary' | 'head_tail'; keep: number; max_string: number };
  redact: PiiKind[];
  /** Its results are outside content: the touch's intent marks the session untrusted. */
  untrusted: boolean;
  backend: Backend;
}

/** A tool a `sync` touch is not waited on for (seed §3.2): declared async, or estimated over 3 s. */
export function asyncOnly(t: Pick<Tool, 'channel' | 'estimateMs'>): boolean {
  return t.channel === 'async' || (t.estimateMs !== undefined && t.estimateMs > SYNC_ESTIMATE_LIMIT_MS);
}

export function listing(t: Tool): ToolListing {
  return {
    name: t.name,
    kind: t.kind,
    description: t.description,
    input_schema: t.inputSchema,
    channel: t.channel,
    timeout_ms: t.timeoutMs,
    permission: t.permission,
  };
}

/** Every problem in the `tools:` section that the per-key schema could not see. Pure. */
export function checkTools(tools: Readonly<Record<string, ToolConfig>>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [name, t] of Object.entries(tools)) {
    const at = (k: string) => `tools.${name}.${k}`;
    const compiled = compileInputSchema(t.input_schema as JsonSchema);
    if (!compiled.ok) {
      problems.push({ path: at('input_schema'), message: compiled.message });
      continue;
    }
    const fields = new Set(topLevelFields(compiled.schema));
    if (t.sql) {
      const tpl = parseSql(t.sql.query);
      if (tpl.positionalMarkers > 0)
        problems.push({
          path: at('sql.query'),
          message:
            'uses positional parameters (? or $1); name them (:status) so each binds a schema property',
        });
      for (const p of tpl.names)
        if (!fields.has(p))
          problems.push({
            path: at('sql.query'),
            message: `names :${p}, which input_schema does not declare; add it to input_schema.properties or fix the name`,
          });
      if (t.sql.database && /^postgres(ql)?:/i.test(t.sql.database))
        problems.push({
          path: at('sql.database'),
          message: 'a PostgreSQL URL carries a password; put it in a variable and name it in database_env',
        });
    }
    if (t.http) {
      for (const f of urlFields(t.http.url))
        if (!fields.has(f))
          problems.push({
            path: at('http.url'),
            message: `names {${f}}, which input_schema does not declare; add it to input_schema.properties or fix the name`,
          });
      try {
        const u = new URL(fillUrl(t.http.url, {}));
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        problems.push({ path: at('http.url'), message: 'must be an absolute http:// or https:// URL' });
      }
    }
  }
  return problems;
}

/** A backend that answers every call with the same configuration failure (a variable left unset). */
function misconfigured(message: string): Backend {
  return {
    run() {
      return Promise.reject(new TouchFailure('TOOL_FAILED', message, { status: 'not_configured' }));
    },
  };
}

/** Header and env maps: `<name>_env: VARIABLE` takes the variable's value (unset → reported). */
function resolveEnvMap(
  map: Record<string, string>,
  env: NodeJS.ProcessEnv,
  lower: boolean,
): { values: Record<string, string>; missing: string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const [k, v] of Object.entries(map)) {
    const m = /^(.+)_env$/i.exec(k);
    const name = m ? m[1]! : k;
    const key = lower ? name.toLowerCase() : name;
    if (!m) values[key] = v;
    else if (env[v] !== undefined && env[v] !== '') values[key] = env[v]!;
    else missing.push(v);
  }
  return { values, missing };
}

export interface BuildContext {
  env: NodeJS.ProcessEnv;
  egress: Pick<Egress, 'dispatcher'>;
  /** Told of each tool that will fail every call until the operator fixes its environment. */
  warn(tool: string, message: string): void;
}

function backendOf(name: string, t: ToolConfig, b: BuildContext): Backend {
  if (t.sql) {
    const location = t.sql.database ?? (t.sql.database_env ? b.env[t.sql.database_env] : undefined);
    if (!location) {
      const message = `${t.sql.database_env} is not set on the gateway; the operator must set it`;
      b.warn(name, message);
      return misconfigured(message);
    }
    const target = sqlTarget(location);
    const tpl = parseSql(t.sql.query);
    return target.dialect === 'postgres'
      ? postgresBackend(target.url, tpl, t.permission, t.concurrency)
      : sqliteBackend(resolve(target.path), tpl, t.permission, t.concurrency);
  }
  if (t.http) {
    const { values, missing } = resolveEnvMap(t.http.headers, b.env, true);
    if (missing.length > 0) {
      const message = `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set on the gateway; the operator must set ${missing.length === 1 ? 'it' : 'them'}`;
      b.warn(name, message);
      return misconfigured(message);
    }
    return httpBackend({ method: t.http.method, url: t.http.url, headers: values }, b.egress);
  }
  const c = t.command!;
  const spec = Array.isArray(c) ? { argv: c, env: {} as Record<string, string> } : c;
  const { values, missing } = resolveEnvMap(spec.env, b.env, false);
  for (const m of missing) b.warn(name, `${m} is not set on the gateway; the command runs without it`);
  const cwd = 'cwd' in spec && spec.cwd ? (isAbsolute(spec.cwd) ? spec.cwd : resolve(spec.cwd)) : undefined;
  return commandBackend({ argv: spec.argv, ...(cwd ? { cwd } : {}), env: values });
}

/** The configured tools, compiled (config already passed `checkTools`). */
export function buildConfigured(tools: Readonly<Record<string, ToolConfig>>, b: BuildContext): Tool[] {
  return Object.entries(tools).map(([name, t]) => {
    const compiled = compileInputSchema(t.input_schema as JsonSchema);
    if (!compiled.ok) throw new Error(`tools.${name}.input_schema: ${compiled.message}`);
    return {
      name,
      kind: t.kind,
      description: t.description,
      inputSchema: compiled.schema,
      validate: compiled.validate,
      fillsDefaults: compiled.fillsDefaults,
      fields: topLevelFields(compiled.schema),
      permission: t.permission,
      timeoutMs: timeoutOf(t),
      concurrency: t.concurrency,
      channel: t.channel,
      estimateMs: t.estimate_ms,
      context: t.context,
      redact: t.redact,
      untrusted: t.untrusted,
      backend: backendOf(name, t, b),
    };
  });
}

/** An in-process tool, checked like a config entry; throws one line per problem. */
export function buildInProcess(raw: unknown, where: string, kind: ToolKind = 'module'): Tool {
  const parsed = inProcessOptions.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      parsed.error.issues
        .map((i) => `${where}${i.path.length ? `.${i.path.join('.')}` : ''}: ${i.message}`)
        .join('\n'),
    );
  const t = parsed.data;
  const compiled = compileInputSchema(t.schema as JsonSchema);
  if (!compiled.ok) throw new Error(`${where}.schema: ${compiled.message}`);
  const run = t.run as InProcessTool['run'];
  return {
    name: t.name,
    kind,
    description: t.description,
    inputSchema: compiled.schema,
    validate: compiled.validate,
    fillsDefaults: compiled.fillsDefaults,
    fields: topLevelFields(compiled.schema),
    permission: t.permission,
    timeoutMs: timeoutOf(t),
    concurrency: t.concurrency,
    channel: t.channel,
    estimateMs: t.estimate_ms,
    context: t.context,
    redact: t.redact,
    untrusted: t.untrusted,
    backend: {
      run: async (params, ctx) =>
        run(params, {
          // Read through, so a tool that never looks at its signal never makes one (attempt.ts).
          get signal() {
            return ctx.signal;
          },
          caller: ctx.caller,
          task_id: ctx.task_id,
          owner: ctx.owner,
          partial: (text) => ctx.onPartial?.(text),
        }),
    },
  };
}
