import { homedir } from 'node:os';
import { relative } from 'node:path';
import {
  type CodexScope,
  codexConfigPath,
  codexHooksPath,
  DEFAULT_CODEX_BRIDGE,
  mergeCodexHooks,
} from '../runtimes/setup/codex.js';
import { bridgeArgv, configDefinesHooks, setCodexNotify } from '../runtimes/setup/codex-toml.js';
import { unifiedDiff } from './diff.js';
import { readIfPresent, writeAtomically } from './files.js';

export interface SetupCodexOptions {
  project?: boolean;
  user?: boolean;
  /** The bridge command written into hooks.json and, split into argv, into `notify`. */
  bridge?: string;
  dryRun?: boolean;
  cwd?: string;
  home?: string;
  out?: (s: string) => void;
  err?: (s: string) => void;
}

export type FileOutcome =
  | { kind: 'unchanged' | 'written'; path: string }
  | { kind: 'dry-run'; path: string; diff: string }
  /** notify only: a project scope has no documented config.toml, or someone else's notify is there. */
  | { kind: 'skipped' | 'conflict'; path: string; reason: string };

export interface SetupCodexOutcome {
  hooks: FileOutcome;
  notify: FileOutcome;
}

interface Planned {
  path: string;
  before: string | undefined;
  after: string;
}

/**
 * `switchboard setup codex`: merges Switchboard's command hooks into Codex's hooks.json and sets
 * `notify` in ~/.codex/config.toml. Both files are checked before either is written, so a file we cannot
 * read leaves both alone. The default scope is the user's: `notify` is only documented there, and
 * project hooks load only once the project is trusted.
 */
export async function run(opts: SetupCodexOptions = {}): Promise<SetupCodexOutcome> {
  const out = opts.out ?? ((s: string) => process.stdout.write(s));
  const err = opts.err ?? ((s: string) => process.stderr.write(s));
  if (opts.project && opts.user) throw new Error('choose one scope: --project or --user');
  const scope: CodexScope = opts.project ? 'project' : 'user';
  const cwd = opts.cwd ?? process.cwd();
  const home = opts.home ?? homedir();
  const bridge = opts.bridge ?? DEFAULT_CODEX_BRIDGE;

  const hooksPath = codexHooksPath(scope, { cwd, home });
  const hooksBefore = readIfPresent(hooksPath);
  let parsed: unknown;
  try {
    parsed = hooksBefore === undefined ? undefined : JSON.parse(hooksBefore);
  } catch (e) {
    throw new Error(`${hooksPath} is not valid JSON (${(e as Error).message}); nothing was changed`);
  }
  const merged = mergeCodexHooks(parsed, bridge);
  if (merged.kind === 'invalid') throw new Error(`${hooksPath}: ${merged.problem}; nothing was changed`);
  const hooksPlan: Planned | undefined = merged.changed
    ? { path: hooksPath, before: hooksBefore, after: `${JSON.stringify(merged.hooksFile, null, 2)}\n` }
    : undefined;

  const configPath = codexConfigPath(home);
  let notify: FileOutcome | undefined;
  let notifyPlan: Planned | undefined;
  if (scope === 'project') {
    notify = { kind: 'skipped', path: configPath, reason: 'notify is only documented in the user config' };
  } else {
    const argv = bridgeArgv(bridge);
    const configBefore = readIfPresent(configPath);
    if (!argv) {
      notify = { kind: 'skipped', path: configPath, reason: 'the bridge command needs a shell' };
    } else {
      const edit = setCodexNotify(configBefore ?? '', argv);
      if (edit.kind === 'invalid') {
        throw new Error(`${configPath}: cannot read it (${edit.problem}); nothing was changed`);
      }
      if (edit.kind === 'conflict') {
        notify = { kind: 'conflict', path: configPath, reason: `notify is already set to ${edit.existing}` };
      } else if (edit.changed) {
        notifyPlan = { path: configPath, before: configBefore, after: edit.text };
      } else {
        notify = { kind: 'unchanged', path: configPath };
      }
    }
    if (configBefore !== undefined && configDefinesHooks(configBefore)) {
      err(`switchboard: warning: ${configPath} also defines [hooks]; Codex runs those beside hooks.json\n`);
    }
  }

  const hooks = apply(hooksPlan, hooksPath, opts.dryRun, { cwd, scope }, out);
  notify ??= apply(notifyPlan, configPath, opts.dryRun, { cwd, scope: 'user' }, out);
  if (!opts.dryRun) report(hooks, notify, out, err);
  return { hooks, notify };
}

function apply(
  plan: Planned | undefined,
  path: string,
  dryRun: boolean | undefined,
  where: { cwd: string; scope: CodexScope },
  out: (s: string) => void,
): FileOutcome {
  if (!plan) return { kind: 'unchanged', path };
  if (dryRun) {
    const shown = where.scope === 'user' ? path : relative(where.cwd, path);
    const diff = unifiedDiff(plan.before ?? '', plan.after, shown, plan.before !== undefined);
    out(diff);
    return { kind: 'dry-run', path, diff };
  }
  writeAtomically(path, plan.after);
  return { kind: 'written', path };
}

function report(
  hooks: FileOutcome,
  notify: FileOutcome,
  out: (s: string) => void,
  err: (s: string) => void,
): void {
  out(
    hooks.kind === 'written'
      ? `${hooks.path}: installed Switchboard's hooks; review and trust them in Codex with /hooks\n`
      : `${hooks.path}: Switchboard's hooks are already installed\n`,
  );
  if (notify.kind === 'written') out(`${notify.path}: set notify to the Switchboard bridge\n`);
  if (notify.kind === 'unchanged') out(`${notify.path}: notify already runs the Switchboard bridge\n`);
  if (notify.kind === 'conflict' || notify.kind === 'skipped') {
    err(`switchboard: note: ${notify.path}: notify not set: ${notify.reason}\n`);
  }
}
