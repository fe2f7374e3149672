import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { parse } from 'yaml';
import type { EnvelopeInput } from '../../envelope/index.js';
import type { GateDeps } from '../module.js';
import type { CompiledPolicy } from '../compile.js';
import { expandPattern, formatProblem, type PolicySource } from '../load.js';
import { preparePolicy } from '../policy.js';

/** An event carries this many problem lines; the log line and `GET /v1/policy` carry the first. */
const MAX_PROBLEMS_IN_EVENT = 20;

export interface PolicyStatus {
  /** The serving revision, or `none` while no policy ever loaded. */
  revision: string;
  loaded_at: string | null;
  /** Why the last load failed (its first problem, `file:line:col path: message`), until one succeeds. */
  last_error: string | null;
  problems: string[];
  files: string[];
}

export type ReloadTrigger = 'start' | 'sighup' | 'watch' | 'manual';

export type ReloadOutcome =
  | { kind: 'loaded'; revision: string; previous: string | null }
  | { kind: 'unchanged'; revision: string }
  | { kind: 'rejected'; problems: string[]; kept: string | null };

/**
 * Where the rules come from: the config file itself when the server was started from one (read again
 * on every reload, so SIGHUP picks up edited rules and the problems carry line numbers), else the
 * parsed config section (tests, built-in defaults) without line numbers.
 */
export function configPolicySources(s: GateDeps): PolicySource[] {
  if (existsSync(s.configSource)) {
    return [{ kind: 'config', name: s.configSource, text: readFileSync(s.configSource, 'utf8') }];
  }
  const c = s.config as unknown as Record<string, unknown>;
  return [
    {
      kind: 'value',
      name: s.configSource,
      value: { rules: c['rules'] ?? [], policy_files: c['policy_files'] ?? [], gate: c['gate'] ?? {} },
    },
  ];
}

interface HolderDeps {
  sources: () => PolicySource[];
  emit: (e: EnvelopeInput) => Promise<unknown>;
  logger: Logger;
  now: () => number;
}

/**
 * Holds the serving revision. A load compiles from scratch and swaps one reference on success, so a
 * decision sees either the old revision or the new one, never a mix; a failed load keeps the old one.
 */
export class PolicyHolder {
  private compiled: CompiledPolicy | undefined;
  private loadedAt: number | null = null;
  private lastProblems: string[] = [];
  private files: string[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: HolderDeps) {}

  current(): CompiledPolicy | undefined {
    return this.compiled;
  }

  /** Policy files of the serving revision (or of the failed attempt, which is what the user edits). */
  watchedFiles(): string[] {
    return this.files;
  }

  status(): PolicyStatus {
    return {
      revision: this.compiled?.revision ?? 'none',
      loaded_at: this.loadedAt === null ? null : new Date(this.loadedAt).toISOString(),
      last_error: this.lastProblems[0] ?? null,
      problems: this.lastProblems.slice(0, MAX_PROBLEMS_IN_EVENT),
      files: this.files,
    };
  }

  /** Reloads run one at a time, in the order asked. */
  reload(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const next = this.queue.then(() => this.load(trigger));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async load(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    let prepared: ReturnType<typeof preparePolicy>;
    let sources: PolicySource[] = [];
    try {
      sources = this.deps.sources();
      prepared = preparePolicy(sources);
    } catch (err) {
      // A file vanishing between listing and reading, a permission error: the same as a broken policy.
      const message = `cannot read the policy: ${(err as Error).message}`;
      prepared = { ok: false, problems: [{ file: '(policy)', line: 0, column: 0, path: '', message }] };
    }
    const kept = this.compiled?.revision ?? null;
    if (!prepared.ok) {
      const problems = prepared.problems.map(formatProblem);
      this.lastProblems = problems;
      // Never loaded: watch what the sources name, so fixing the broken file reloads by itself.
      if (!this.compiled) this.files = namedFiles(sources);
      this.deps.logger.error(
        { trigger, kept_revision: kept ?? 'none', problems: problems.slice(0, MAX_PROBLEMS_IN_EVENT) },
        `policy rejected: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`,
      );
      await this.deps.emit({
        type: 'agent.policy.rejected',
        policy: { revision: kept },
        redacted_summary: {
          trigger,
          kept_revision: kept ?? 'none',
          problem_count: problems.length,
          problems: problems.slice(0, MAX_PROBLEMS_IN_EVENT),
        },
      });
      return { kind: 'rejected', problems, kept };
    }
    const { compiled, files } = prepared;
    this.files = files;
    this.lastProblems = [];
    if (kept === compiled.revision) return { kind: 'unchanged', revision: kept };
    this.compiled = compiled;
    this.loadedAt = this.deps.now();
    this.deps.logger.info(
      { trigger, revision: compiled.revision, previous: kept, rules: compiled.rules.length },
      'policy loaded',
    );
    await this.deps.emit({
      type: 'agent.policy.loaded',
      policy: { revision: compiled.revision },
      redacted_summary: {
        trigger,
        revision: compiled.revision,
        previous_revision: kept,
        rules: compiled.rules.length,
        files,
      },
    });
    return { kind: 'loaded', revision: compiled.revision, previous: kept };
  }
}

/** Best effort: the policy files the sources name, for watching a policy that has not loaded yet. */
export function namedFiles(sources: readonly PolicySource[]): string[] {
  const out: string[] = [];
  for (const src of sources) {
    if (src.kind === 'file') out.push(resolve(src.path));
    if (src.kind !== 'config' && src.kind !== 'value') continue;
    let value: unknown;
    try {
      value = src.kind === 'config' ? parse(src.text) : src.value;
    } catch {
      continue;
    }
    const patterns = (value as { policy_files?: unknown } | null)?.policy_files;
    if (!Array.isArray(patterns)) continue;
    const base = src.base_dir ?? (src.kind === 'config' ? dirname(src.name) : process.cwd());
    for (const pattern of patterns) {
      if (typeof pattern !== 'string') continue;
      const found = expandPattern(pattern, base);
      out.push(...(found.kind === 'ok' ? found.paths : [resolve(base, pattern)]));
    }
  }
  return out;
}
