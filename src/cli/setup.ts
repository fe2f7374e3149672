import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { applyEnv } from '../config/env.js';
import { ConfigError, configPath } from '../config/load.js';
import { DEFAULT_URL, hookFilePath } from '../hook/settings.js';
import {
  DEFAULT_BRIDGE_COMMAND,
  type HookTransport,
  mergeClaudeCodeSettings,
  type SettingsScope,
  settingsPath,
} from '../runtimes/setup/claude-code.js';
import { mcpConfigLocation, mcpServerEntry, mergeMcpServer } from '../runtimes/setup/mcp.js';
import { parseNotifyTarget, planNotifyConfig } from '../runtimes/setup/notify-config.js';
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
  /**
   * A channel name from switchboard.yaml or an ntfy topic URL: also writes the channel, a starter route
   * and the MCP server entry (docs/hooks.md "--notify").
   */
  notify?: string;
  /** Name of the channel made from an ntfy topic URL (default `phone`). */
  channelName?: string;
  /** Agent key names the starter route sends for (default: every agent key not bound to a task). */
  agent?: string[];
  /** Written to `server.public_url`: where the phone's Approve/Deny buttons reach the gateway. */
  publicUrl?: string;
  /** With an http:// ntfy URL: add its host to egress.allow (a LAN or loopback server, on purpose). */
  allowPlainHttp?: boolean;
  /** The Switchboard config to edit (default: $SWITCHBOARD_CONFIG, else ./switchboard.yaml). */
  config?: string;
  cwd?: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
  out?: (s: string) => void;
  err?: (s: string) => void;
}

export type FileRole = 'settings' | 'config' | 'mcp' | 'hook';

export type FileOutcome =
  | { role: FileRole; kind: 'unchanged' | 'written'; path: string }
  | { role: FileRole; kind: 'dry-run'; path: string; diff: string };

/** `path` is the settings file; `files` has one outcome per file looked at (three with --notify). */
export type SetupOutcome = (
  | { kind: 'unchanged'; path: string }
  | { kind: 'written'; path: string }
  | { kind: 'dry-run'; path: string; diff: string }
) & { files: FileOutcome[] };

interface Planned {
  role: FileRole;
  path: string;
  before: string | undefined;
  after: string | undefined;
  /** Files that may hold secrets keep their permissions. */
  mode: number;
}

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
 *
 * With `--notify <channel>` it also edits switchboard.yaml (a channel, a starter route:
 * src/runtimes/setup/notify-config.ts) and adds the `switchboard mcp` server where Claude Code reads MCP
 * servers for the same scope (src/runtimes/setup/mcp.ts). Every file is read and checked before any is
 * written, so a file we cannot read leaves all of them alone.
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
  if (opts.notify === undefined) {
    const stray = (['channelName', 'agent', 'publicUrl', 'config', 'allowPlainHttp'] as const).filter(
      (k) => opts[k] !== undefined,
    );
    if (stray.length > 0) {
      const flag = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw new Error(`${stray.map(flag).join(', ')} only apply with --notify <channel>`);
    }
  }
  const cwd = opts.cwd ?? process.cwd();
  const home = opts.home ?? homedir();
  const path = settingsPath(scope, { cwd, home });
  const url = opts.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL;

  const before = readIfPresent(path);
  const current = parseJson(path, before);
  const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0)) {
    throw new Error('--timeout is a whole number of seconds');
  }
  const merged = mergeClaudeCodeSettings(current, {
    transport,
    url,
    command: opts.bridge ?? DEFAULT_BRIDGE_COMMAND,
    ...(timeout !== undefined ? { gateTimeoutSec: timeout } : {}),
  });
  if (merged.kind === 'invalid') throw new Error(`${path}: ${merged.problem}; nothing was changed`);
  const warnings = [...merged.warnings];
  const plans: Planned[] = [
    {
      role: 'settings',
      path,
      before,
      after: merged.changed ? `${JSON.stringify(merged.settings, null, 2)}\n` : undefined,
      mode: modeOf(path, 0o644),
    },
  ];
  const notes: { role: FileRole; text: string }[] = [];
  const keyFile = await agentKeyFile(opts, cwd, env);
  if (keyFile && transport === 'command') {
    const hook = planHookFile(hookFilePath(env, home), keyFile.path);
    plans.push(hook);
    notes.push({
      role: 'hook',
      text:
        hook.after === undefined
          ? `the bridge already finds key ${keyFile.name}; nothing to do`
          : `the bridge finds key ${keyFile.name} here (key_file), no exported variable needed`,
    });
  }
  if (opts.notify !== undefined) {
    const notify = await planNotify(opts, { scope, cwd, home, env, url, keyFile: keyFile?.path });
    plans.unshift(notify.config);
    plans.push(notify.mcp);
    warnings.push(...notify.warnings);
    notes.push(...notify.notes);
  }
  for (const w of warnings) err(`switchboard: warning: ${w}\n`);

  const files = plans.map((p) => apply(p, opts.dryRun, cwd, out));
  const settings = files.find((f) => f.role === 'settings')!;
  const changed = files.filter((f) => f.kind !== 'unchanged');
  if (opts.dryRun && changed.length > 0) {
    const diff = changed.map((f) => (f.kind === 'dry-run' ? f.diff : '')).join('');
    return { kind: 'dry-run', path, diff, files };
  }
  if (settings.kind === 'unchanged') {
    out(`${path}: Switchboard's hooks are already installed; nothing to do\n`);
  } else {
    out(
      `${path}: installed Switchboard's hooks (${transport}); restart Claude Code or run /hooks to load them\n`,
    );
  }
  for (const note of notes) {
    const file = files.find((f) => f.role === note.role)!;
    out(`${file.path}: ${note.text}\n`);
  }
  if (changed.length === 0) return { kind: 'unchanged', path, files };
  if (transport === 'command' && !env.SWITCHBOARD_KEY && !keyFile) {
    err(
      'switchboard: note: no agent key file found (run setup where switchboard.yaml is, or pass --config): the bridge reads SWITCHBOARD_KEY (an agent key) and SWITCHBOARD_URL from its environment\n',
    );
  }
  return { kind: 'written', path, files };
}

function parseJson(path: string, text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch (e) {
    throw new Error(
      `${path} is not valid JSON (${(e as Error).message}); fix it by hand, nothing was changed`,
    );
  }
}

/** The config file `serve` would read: --config, else $SWITCHBOARD_CONFIG, else ./switchboard.yaml. */
function notifyConfigFile(opts: SetupClaudeCodeOptions, cwd: string, env: NodeJS.ProcessEnv): string {
  const path = opts.config ? resolve(cwd, opts.config) : configPath(env, cwd);
  const text = path === undefined ? undefined : readIfPresent(path);
  if (path === undefined || text === undefined) {
    throw new Error(
      `${path ?? resolve(cwd, 'switchboard.yaml')} not found: --notify edits the Switchboard config; run \`switchboard init\` first (or pass --config <path>). Nothing was changed`,
    );
  }
  return path;
}

async function planNotify(
  opts: SetupClaudeCodeOptions,
  where: {
    scope: SettingsScope;
    cwd: string;
    home: string;
    env: NodeJS.ProcessEnv;
    url: string;
    keyFile: string | undefined;
  },
): Promise<{ config: Planned; mcp: Planned; warnings: string[]; notes: { role: FileRole; text: string }[] }> {
  const target = parseNotifyTarget(opts.notify!);
  if (target.kind === 'invalid') throw new Error(`${target.problem}; nothing was changed`);
  const configFile = notifyConfigFile(opts, where.cwd, where.env);
  const configBefore = readIfPresent(configFile) ?? '';
  const planned = planNotifyConfig(configBefore, {
    target,
    ...(opts.channelName !== undefined ? { channelName: opts.channelName } : {}),
    ...(opts.agent?.length ? { agents: opts.agent } : {}),
    ...(opts.publicUrl !== undefined ? { publicUrl: opts.publicUrl } : {}),
    ...(opts.allowPlainHttp ? { allowPlainHttp: true } : {}),
    env: where.env,
  });
  if (planned.kind === 'invalid') throw new Error(`${configFile}: ${planned.problem}`);
  if (planned.changed) await checkLoads(configFile, planned.text, where.env);

  const location = mcpConfigLocation(where.scope, where);
  const mcpBefore = readIfPresent(location.path);
  const mcpMerged = mergeMcpServer(
    parseJson(location.path, mcpBefore),
    location.at,
    mcpServerEntry(where.scope, {
      url: where.url,
      ...(opts.bridge ? { bridge: opts.bridge } : {}),
      ...(where.keyFile ? { keyFile: where.keyFile } : {}),
    }),
  );
  if (mcpMerged.kind === 'invalid') {
    throw new Error(`${location.path}: ${mcpMerged.problem}; nothing was changed`);
  }
  const trailingNewline = mcpBefore === undefined || mcpBefore.endsWith('\n');
  const notes: { role: FileRole; text: string }[] = [
    {
      role: 'config',
      text: planned.changed
        ? `added ${planned.added.join(', ')}; (re)start \`switchboard serve\` to load it`
        : `already routes to channel ${planned.channel}; nothing to do`,
    },
    ...(planned.topic
      ? [
          {
            role: 'config' as const,
            text: `on the phone, ntfy app: + → topic ${planned.topic}, server ${planned.url}`,
          },
        ]
      : []),
    {
      role: 'mcp',
      text: mcpMerged.changed
        ? `added the MCP server "switchboard" (report_progress, ask_approval); Claude Code loads it on its next start${where.scope === 'project' ? ' and asks once to approve it' : ''}`
        : 'the MCP server "switchboard" is already there; nothing to do',
    },
  ];
  return {
    config: {
      role: 'config',
      path: configFile,
      before: configBefore,
      after: planned.changed ? planned.text : undefined,
      mode: modeOf(configFile, 0o600),
    },
    mcp: {
      role: 'mcp',
      path: location.path,
      before: mcpBefore,
      after: mcpMerged.changed
        ? `${JSON.stringify(mcpMerged.config, null, 2)}${trailingNewline ? '\n' : ''}`
        : undefined,
      mode: modeOf(location.path, where.scope === 'project' ? 0o644 : 0o600),
    },
    warnings: [...planned.warnings, ...mcpMerged.warnings],
    notes,
  };
}

/**
 * The agent key the hooks and the MCP server should use, when the Switchboard config here keeps it in a
 * key file (`switchboard init`): `--agent`'s first name, else the first agent key not bound to a task.
 * No config, a config that does not load, or keys from variables: undefined (the environment decides).
 */
async function agentKeyFile(
  opts: SetupClaudeCodeOptions,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ name: string; path: string } | undefined> {
  const path = opts.config ? resolve(cwd, opts.config) : configPath(env, cwd);
  if (path === undefined || readIfPresent(path) === undefined) return undefined;
  const { loadConfig } = await import('../server/config.js');
  let keys: { name: string; role: string; key_file?: string; task_id?: string }[];
  try {
    keys = loadConfig({ path, env }).config.auth.keys;
  } catch {
    return undefined; // --notify reports a config that does not load
  }
  const agents = keys.filter((k) => k.role === 'agent' && k.key_file && !k.task_id);
  const chosen = opts.agent?.length ? agents.find((k) => k.name === opts.agent![0]) : agents[0];
  // Relative key files are relative to where the gateway runs: here.
  return chosen ? { name: chosen.name, path: resolve(cwd, chosen.key_file!) } : undefined;
}

/** `~/.config/switchboard/hook.json` with `key_file` set, every other setting kept. */
function planHookFile(path: string, keyFile: string): Planned {
  const before = readIfPresent(path);
  const current = parseJson(path, before);
  const base = typeof current === 'object' && current !== null && !Array.isArray(current) ? current : {};
  const next = { ...(base as Record<string, unknown>), key_file: keyFile };
  const changed = (base as Record<string, unknown>).key_file !== keyFile;
  return {
    role: 'hook',
    path,
    before,
    after: changed ? `${JSON.stringify(next, null, 2)}\n` : undefined,
    mode: modeOf(path, 0o600),
  };
}

/** The edited config must load as `serve` would load it, module checks included, or nothing is written. */
async function checkLoads(path: string, text: string, env: NodeJS.ProcessEnv): Promise<void> {
  // Loaded here only: the module checks pull in every module's schema, which plain setup never needs.
  const { parseConfig } = await import('../server/config.js');
  const doc = parseDocument(text);
  const raw = (doc.toJS() ?? {}) as Record<string, unknown>;
  try {
    parseConfig(applyEnv(raw, env), path);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    throw new Error(
      `${path}: the config would not load after this change, so nothing was changed; fix these first:\n${e.problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`,
    );
  }
}

function modeOf(path: string, fallback: number): number {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return fallback;
  }
}

function apply(
  plan: Planned,
  dryRun: boolean | undefined,
  cwd: string,
  out: (s: string) => void,
): FileOutcome {
  if (plan.after === undefined) return { role: plan.role, kind: 'unchanged', path: plan.path };
  if (dryRun) {
    const rel = relative(cwd, plan.path);
    const shown = rel.startsWith('..') ? plan.path : rel;
    const diff = unifiedDiff(plan.before ?? '', plan.after, shown, plan.before !== undefined);
    out(diff);
    return { role: plan.role, kind: 'dry-run', path: plan.path, diff };
  }
  writeAtomically(plan.path, plan.after, plan.mode);
  return { role: plan.role, kind: 'written', path: plan.path };
}
