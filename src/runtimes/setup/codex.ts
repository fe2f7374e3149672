import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

/**
 * Merges Switchboard's command hooks into Codex's hooks.json (reference/runtimes.md §2.3, the Claude
 * shape) without touching anyone else's entries. Running it twice changes nothing. The `notify` line of
 * config.toml is handled by ./codex-toml.ts.
 */

type Json = Record<string, unknown>;
export type CodexScope = 'project' | 'user';

export const DEFAULT_CODEX_BRIDGE = 'switchboard hook codex';

/** Events where the gate decides: no timeout is written, so Codex's own 600 s default can hold an approval. */
export const CODEX_GATE_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;

/**
 * Recorded events. Only the names in `codex-rs/hooks/src/lib.rs` (reference §2.3): `SessionEnd` and
 * `Interrupt` appear in the docs alone, so a Codex built from that code would not know them.
 */
export const CODEX_OBSERVED_EVENTS = [
  'PostToolUse',
  'PreCompact',
  'PostCompact',
  'SessionStart',
  'UserPromptSubmit',
  'SubagentStart',
  'SubagentStop',
  'Stop',
] as const;

/** An observer must never stall the agent behind a slow gateway; the log can miss one event instead. */
export const CODEX_OBSERVER_TIMEOUT_SEC = 10;

/** Where Codex reads hooks.json (reference §2.3): `~/.codex/hooks.json` or `<repo>/.codex/hooks.json`. */
export function codexHooksPath(scope: CodexScope, where: { cwd: string; home: string }): string {
  return join(scope === 'user' ? where.home : where.cwd, '.codex', 'hooks.json');
}

/** Only the user file is documented for `notify` (reference §2.2); a project config.toml is not. */
export function codexConfigPath(home: string): string {
  return join(home, '.codex', 'config.toml');
}

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Recognizes Switchboard's own handler, by the configured command or the usual bridge spelling. */
export function isSwitchboardCodexHandler(handler: unknown, command = DEFAULT_CODEX_BRIDGE): boolean {
  if (!isRecord(handler) || handler.type !== 'command' || typeof handler.command !== 'string') return false;
  return handler.command === command || /(^|[\s/])switchboard(\.js)?\s+hook\s+codex\b/.test(handler.command);
}

/**
 * Switchboard's matcher groups, one per event. No matcher: in the Claude shape an absent matcher is
 * every tool, and Codex matchers are regexes (`^Bash$`), where Claude's `*` would not parse.
 */
export function codexSwitchboardHooks(command = DEFAULT_CODEX_BRIDGE): Record<string, Json[]> {
  const gate = (CODEX_GATE_EVENTS as readonly string[]).map((event) => [
    event,
    [{ hooks: [{ type: 'command', command }] }],
  ]);
  const observed = CODEX_OBSERVED_EVENTS.map((event) => [
    event,
    [{ hooks: [{ type: 'command', command, timeout: CODEX_OBSERVER_TIMEOUT_SEC }] }],
  ]);
  return Object.fromEntries([...gate, ...observed]);
}

export type CodexMergeOutcome =
  | { kind: 'ok'; hooksFile: Json; changed: boolean }
  | { kind: 'invalid'; problem: string };

/** Checks the shape we must walk; anything else is reported, never overwritten. */
function problemWith(file: Json): string | undefined {
  if (file.hooks === undefined) return undefined;
  if (!isRecord(file.hooks)) return '"hooks" is not an object';
  for (const [event, groups] of Object.entries(file.hooks)) {
    if (!Array.isArray(groups)) return `"hooks.${event}" is not an array`;
    for (const [i, group] of groups.entries()) {
      if (!isRecord(group) || (group.hooks !== undefined && !Array.isArray(group.hooks))) {
        return `"hooks.${event}[${i}]" is not a matcher group with a "hooks" array`;
      }
    }
  }
  return undefined;
}

/** Removes Switchboard's handlers everywhere; a group left empty by that removal goes too. */
function strip(hooks: Json, command: string): Json {
  const out: Json = {};
  for (const [event, groups] of Object.entries(hooks)) {
    const kept = (groups as Json[]).flatMap((group) => {
      const handlers = (group.hooks as unknown[] | undefined) ?? [];
      const others = handlers.filter((h) => !isSwitchboardCodexHandler(h, command));
      if (others.length === handlers.length) return [group];
      return others.length > 0 ? [{ ...group, hooks: others }] : [];
    });
    if (kept.length > 0) out[event] = kept;
  }
  return out;
}

/** True when every group holding our handler is one of ours, exactly, and each of ours is there. */
function installedExactly(file: Json, ours: Record<string, Json[]>, command: string): boolean {
  const hooks = isRecord(file.hooks) ? file.hooks : {};
  const seen = new Set<string>();
  for (const [event, groups] of Object.entries(hooks)) {
    for (const group of groups as Json[]) {
      const handlers = (group.hooks as unknown[] | undefined) ?? [];
      if (!handlers.some((h) => isSwitchboardCodexHandler(h, command))) continue;
      if (!ours[event]?.some((g) => isDeepStrictEqual(g, group)) || seen.has(event)) return false;
      seen.add(event);
    }
  }
  return seen.size === Object.keys(ours).length;
}

export function mergeCodexHooks(file: unknown, command = DEFAULT_CODEX_BRIDGE): CodexMergeOutcome {
  const base = file === undefined || file === null ? {} : file;
  if (!isRecord(base)) return { kind: 'invalid', problem: 'the hooks file is not a JSON object' };
  const problem = problemWith(base);
  if (problem) return { kind: 'invalid', problem };
  const ours = codexSwitchboardHooks(command);
  // Already installed exactly (wherever the user moved our groups): keep their file as it is.
  if (installedExactly(base, ours, command)) {
    return { kind: 'ok', hooksFile: structuredClone(base), changed: false };
  }
  const current = structuredClone(base);
  const hooks = strip((current.hooks as Json | undefined) ?? {}, command);
  for (const [event, groups] of Object.entries(ours)) {
    hooks[event] = [...((hooks[event] as Json[] | undefined) ?? []), ...groups];
  }
  const merged = { ...current, hooks };
  return { kind: 'ok', hooksFile: merged, changed: !isDeepStrictEqual(merged, base) };
}
