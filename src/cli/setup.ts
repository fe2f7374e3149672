import { homedir } from 'node:os';
import { dirname, relative } from 'node:path';
import { DEFAULT_URL } from '../hook/settings.js';
import {
  DEFAULT_BRIDGE_COMMAND,
  type HookTransport,
  mergeClaudeCodeSettings,
  type SettingsScope,
  settingsPath,
} from '../runtimes/setup/claude-code.js';
import { unifiedDiff } from './diff.js';
import { readIfPresent, writeAtomically } from './files.js';

export interface SetupClaudeCodeOptions {
  project?: boolean;
  user?: boolean;
  local?: boolean;
  http?: boolean;
  command?: boolean;
  url?: string;
  /** The bridge command written into command hooks (default `switchboard hook claude-code`). */
  bridge?: string;
  /** Seconds Claude Code waits on PreToolUse/PermissionRequest; unset keeps its 600 s default. */
  timeout?: string;
  dryRun?: boolean;
  cwd?: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
  out?: (s: string) => void;
  err?: (s: string) => void;
}

export type SetupOutcome =
  | { kind: 'unchanged'; path: string }
  | { kind: 'written'; path: string }
  | { kind: 'dry-run'; path: string; diff: string };

function pick<T extends string>(
  flags: Record<T, boolean | undefined>,
  fallback: NoInfer<T>,
  what: string,
): T {
  const set = (Object.keys(flags) as T[]).filter((k) => flags[k]);
  if (set.length > 1) throw new Error(`choose one ${what}: ${set.map((s) => `--${s}`).join(' or ')}`);
  return set[0] ?? fallback;
}

/**
 * `switchboard setup claude-code`: merges Switchboard's hooks into Claude Code's settings.json. The file
 * is read, merged (never clobbered: src/runtimes/setup/claude-code.ts), and replaced atomically; with
 * `--dry-run` only the diff is printed. Command hooks are the default because they fail closed.
 */
export async function run(opts: SetupClaudeCodeOptions = {}): Promise<SetupOutcome> {
  const out = opts.out ?? ((s: string) => process.stdout.write(s));
  const err = opts.err ?? ((s: string) => process.stderr.write(s));
  const env = opts.env ?? process.env;
  const scope: SettingsScope = pick(
    { project: opts.project, user: opts.user, local: opts.local },
    'project',
    'scope',
  );
  const transport: HookTransport = pick({ command: opts.command, http: opts.http }, 'command', 'transport');
  const cwd = opts.cwd ?? process.cwd();
  const path = settingsPath(scope, { cwd, home: opts.home ?? homedir() });

  const before = readIfPresent(path);
  let current: unknown;
  try {
    current = before === undefined ? undefined : JSON.parse(before);
  } catch (e) {
    throw new Error(
      `${path} is not valid JSON (${(e as Error).message}); fix it by hand, nothing was changed`,
    );
  }
  const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0)) {
    throw new Error('--timeout is a whole number of seconds');
  }
  const merged = mergeClaudeCodeSettings(current, {
    transport,
    url: opts.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL,
    command: opts.bridge ?? DEFAULT_BRIDGE_COMMAND,
    ...(timeout !== undefined ? { gateTimeoutSec: timeout } : {}),
  });
  if (merged.kind === 'invalid') throw new Error(`${path}: ${merged.problem}; nothing was changed`);
  for (const w of merged.warnings) err(`switchboard: warning: ${w}\n`);

  if (!merged.changed) {
    out(`${path}: Switchboard's hooks are already installed; nothing to do\n`);
    return { kind: 'unchanged', path };
  }
  const after = `${JSON.stringify(merged.settings, null, 2)}\n`;
  if (opts.dryRun) {
    const shown = scope === 'user' ? path : relative(cwd, path);
    const diff = unifiedDiff(before ?? '', after, shown, before !== undefined);
    out(diff);
    return { kind: 'dry-run', path, diff };
  }
  writeAtomically(path, after);
  out(
    `${path}: installed Switchboard's hooks (${transport}); restart Claude Code or run /hooks to load them\n`,
  );
  if (transport === 'command' && !env.SWITCHBOARD_KEY) {
    err(
      'switchboard: note: the bridge reads SWITCHBOARD_KEY (an agent key) and SWITCHBOARD_URL from its environment\n',
    );
  }
  return { kind: 'written', path };
}
