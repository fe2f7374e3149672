import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { configPath } from '../config/load.js';
import type { CompiledPolicy } from '../gate/compile.js';
import { evaluateWithTrace } from '../gate/evaluate.js';
import { explainEvaluation } from '../gate/explain.js';
import { formatProblem, type PolicySource } from '../gate/load.js';
import { preparePolicy } from '../gate/policy.js';
import type { GateContext, Intent } from '../gate/types.js';

/**
 * `switchboard policy lint` and `switchboard policy test`: offline, on the files alone (no store, no
 * server), so they run in CI before a deploy and on a laptop without the gateway.
 */

export interface PolicyCliOptions {
  /** The config file; default `$SWITCHBOARD_CONFIG`, else ./switchboard.yaml. */
  config?: string;
  /** `policy test`: exit 1 unless the decision is this one (for CI). */
  expect?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

const stdout = (l: string) => process.stdout.write(`${l}\n`);
const stderr = (l: string) => process.stderr.write(`${l}\n`);

type Prepared =
  | { ok: true; compiled: CompiledPolicy; files: string[]; source: string }
  | { ok: false; lines: string[] };

function prepare(opts: PolicyCliOptions): Prepared {
  const cwd = opts.cwd ?? process.cwd();
  const path = opts.config ? resolve(cwd, opts.config) : configPath(opts.env ?? process.env, cwd);
  if (!path)
    return {
      ok: false,
      lines: ['no config file (pass -c, set SWITCHBOARD_CONFIG, or add ./switchboard.yaml)'],
    };
  if (!existsSync(path)) return { ok: false, lines: [`${path}: no such file`] };
  const name = opts.config ?? path;
  const sources: PolicySource[] = [
    { kind: 'config', name, text: readFileSync(path, 'utf8'), base_dir: dirname(path) },
  ];
  const prepared = preparePolicy(sources);
  if (!prepared.ok) return { ok: false, lines: prepared.problems.map(formatProblem) };
  return { ok: true, compiled: prepared.compiled, files: prepared.files, source: name };
}

/**
 * What `serve` and `doctor` ask before anything starts: the lint of the config file at `path` (its
 * rules and every policy file), as `ok` with a one-line summary or the problem lines.
 */
export function lintConfigFile(path: string): { ok: true; summary: string } | { ok: false; lines: string[] } {
  const p = prepare({ config: path });
  if (!p.ok) return p;
  const files =
    p.files.length > 0 ? ` and ${p.files.length} policy file${p.files.length === 1 ? '' : 's'}` : '';
  return { ok: true, summary: `${p.compiled.rules.length} rules${files}, revision ${p.compiled.revision}` };
}

/** Parses and compiles the config's rules and every policy file; prints each problem; 1 when any. */
export function lint(opts: PolicyCliOptions = {}): number {
  const out = opts.out ?? stdout;
  const err = opts.err ?? stderr;
  const p = prepare(opts);
  if (!p.ok) {
    for (const line of p.lines) err(line);
    err(`${p.lines.length} problem${p.lines.length === 1 ? '' : 's'}`);
    return 1;
  }
  const files =
    p.files.length > 0 ? ` and ${p.files.length} policy file${p.files.length === 1 ? '' : 's'}` : '';
  out(`ok: ${p.compiled.rules.length} rules from ${p.source}${files}, revision ${p.compiled.revision}`);
  return 0;
}

/** An intent file: the intent, plus the facts a live gateway would know (all optional). */
interface IntentFile extends Intent {
  task?: GateContext['task'];
  budgets?: Record<string, number>;
  frozen?: boolean;
  tenant_id?: string;
  agent_id?: string;
  now?: string;
}

function readIntent(file: string, cwd: string): IntentFile {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(resolve(cwd, file), 'utf8'));
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`);
  }
  const v = value as Partial<IntentFile> | null;
  if (typeof v !== 'object' || v === null || typeof v.tool !== 'string') {
    throw new Error(`${file}: an intent is a JSON object with "tool" (string) and "input" (object)`);
  }
  if (typeof v.input !== 'object' || v.input === null || Array.isArray(v.input)) {
    throw new Error(`${file}: "input" must be a JSON object`);
  }
  return v as IntentFile;
}

/** Decides one intent under the config's policy, without a server, and explains every matched rule. */
export function test(file: string, opts: PolicyCliOptions = {}): number {
  const out = opts.out ?? stdout;
  const err = opts.err ?? stderr;
  const intent = readIntent(file, opts.cwd ?? process.cwd());
  const p = prepare(opts);
  if (!p.ok) {
    for (const line of p.lines) err(line);
    return 1;
  }
  const ctx: GateContext = {};
  if (intent.task) ctx.task = intent.task;
  if (intent.budgets) ctx.budgets = intent.budgets;
  if (intent.frozen !== undefined) ctx.frozen = intent.frozen;
  if (intent.tenant_id) ctx.tenant_id = intent.tenant_id;
  if (intent.agent_id) ctx.agent_id = intent.agent_id;
  if (intent.now) ctx.now = new Date(intent.now);
  const plan: Intent = {
    tool: intent.tool,
    input: intent.input,
    action: intent.action ?? null,
    resource: intent.resource ?? null,
    runtime: intent.runtime ?? null,
    ...(intent.event_type ? { event_type: intent.event_type } : {}),
  };
  const evaluation = evaluateWithTrace(p.compiled, plan, ctx);
  for (const line of explainEvaluation(evaluation, p.compiled)) out(line);
  if (opts.expect && evaluation.decision.decision !== opts.expect) {
    err(`expected ${opts.expect}, got ${evaluation.decision.decision}`);
    return 1;
  }
  return 0;
}

/** commander actions: exit codes instead of return values. */
export function runLint(opts: PolicyCliOptions): void {
  process.exitCode = lint(opts);
}

export function runTest(file: string, opts: PolicyCliOptions): void {
  process.exitCode = test(file, opts);
}
