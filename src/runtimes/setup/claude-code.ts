import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';

/**
 * Merges Switchboard's hook entries into a Claude Code settings.json object (reference/runtimes.md
 * §1.2–1.3) without touching anyone else's: other handlers, matcher groups, events and keys stay as they
 * are. Running it twice changes nothing; switching transport replaces only Switchboard's handlers.
 */

type Json = Record<string, unknown>;

export type HookTransport = 'http' | 'command';
export type SettingsScope = 'project' | 'local' | 'user';

export interface ClaudeCodeSetupOptions {
  transport: HookTransport;
  /** Gateway base URL for HTTP hooks. */
  url: string;
  /** The bridge command for command hooks. */
  command?: string;
  /** Name of the variable holding the agent key; Claude Code interpolates it into the header. */
  keyEnv?: string;
  /** Seconds Claude Code waits on a gating hook; unset keeps Claude Code's own default (600 s). */
  gateTimeoutSec?: number;
}

export const DEFAULT_BRIDGE_COMMAND = 'switchboard hook claude-code';
export const DEFAULT_KEY_ENV = 'SWITCHBOARD_KEY';
export const HOOK_PATH = '/v1/runtimes/claude-code/hooks';

/** Events where the gate decides: they keep Claude Code's long default so an approval can be held. */
export const GATE_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;

/** Events recorded for the log and the supervisor's view of activity. */
export const OBSERVED_EVENTS = [
  'PostToolUse',
  'PostToolUseFailure',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'Notification',
  'PreCompact',
  'SessionStart',
  'SessionEnd',
] as const;

/** An observer must never stall the agent behind a slow gateway; the log can miss one event instead. */
export const OBSERVER_TIMEOUT_SEC = 10;

/** Claude Code refuses HTTP handlers on these events (reference §1.3), so they always use the bridge. */
const COMMAND_ONLY = new Set(['SessionStart', 'Setup']);
/** Tool events match on tool_name; `*` is every tool. */
const TOOL_EVENTS = new Set(['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure']);

export function settingsPath(scope: SettingsScope, where: { cwd: string; home: string }): string {
  if (scope === 'user') return join(where.home, '.claude', 'settings.json');
  return join(where.cwd, '.claude', scope === 'local' ? 'settings.local.json' : 'settings.json');
}

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Recognizes Switchboard's own handlers, whichever transport or URL wrote them. */
export function isSwitchboardHandler(handler: unknown, command = DEFAULT_BRIDGE_COMMAND): boolean {
  if (!isRecord(handler)) return false;
  if (handler.type === 'http') return typeof handler.url === 'string' && handler.url.endsWith(HOOK_PATH);
  if (handler.type !== 'command' || typeof handler.command !== 'string') return false;
  return (
    handler.command === command || /(^|[\s/])switchboard(\.js)?\s+hook\s+claude-code\b/.test(handler.command)
  );
}

function handlerFor(event: string, options: ClaudeCodeSetupOptions): Json {
  const gate = (GATE_EVENTS as readonly string[]).includes(event);
  const timeout = gate ? options.gateTimeoutSec : OBSERVER_TIMEOUT_SEC;
  const keyEnv = options.keyEnv ?? DEFAULT_KEY_ENV;
  const handler: Json =
    options.transport === 'http' && !COMMAND_ONLY.has(event)
      ? {
          type: 'http',
          url: new URL(HOOK_PATH, options.url).toString(),
          headers: { Authorization: `Bearer $${keyEnv}` },
          allowedEnvVars: [keyEnv],
        }
      : { type: 'command', command: options.command ?? DEFAULT_BRIDGE_COMMAND };
  if (timeout !== undefined) handler.timeout = timeout;
  return handler;
}

/** Switchboard's matcher groups, one per event. */
export function switchboardHooks(options: ClaudeCodeSetupOptions): Record<string, Json[]> {
  const events = [...GATE_EVENTS, ...OBSERVED_EVENTS];
  return Object.fromEntries(
    events.map((event) => {
      const group: Json = TOOL_EVENTS.has(event) ? { matcher: '*' } : {};
      group.hooks = [handlerFor(event, options)];
      return [event, [group]];
    }),
  );
}

export type MergeOutcome =
  | { kind: 'ok'; settings: Json; changed: boolean; warnings: string[] }
  | { kind: 'invalid'; problem: string };

/** Checks the shape we must walk; anything else is reported, never overwritten. */
function problemWith(settings: Json): string | undefined {
  if (settings.hooks === undefined) return undefined;
  if (!isRecord(settings.hooks)) return '"hooks" is not an object';
  for (const [event, groups] of Object.entries(settings.hooks)) {
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
function strip(hooks: Json, command?: string): Json {
  const out: Json = {};
  for (const [event, groups] of Object.entries(hooks)) {
    const kept = (groups as Json[]).flatMap((group) => {
      const handlers = (group.hooks as unknown[] | undefined) ?? [];
      const others = handlers.filter((h) => !isSwitchboardHandler(h, command));
      if (others.length === handlers.length) return [group];
      return others.length > 0 ? [{ ...group, hooks: others }] : [];
    });
    if (kept.length > 0) out[event] = kept;
  }
  return out;
}

export function mergeClaudeCodeSettings(settings: unknown, options: ClaudeCodeSetupOptions): MergeOutcome {
  const base = settings === undefined || settings === null ? {} : settings;
  if (!isRecord(base)) return { kind: 'invalid', problem: 'the settings file is not a JSON object' };
  const problem = problemWith(base);
  if (problem) return { kind: 'invalid', problem };
  const current = structuredClone(base);
  const ours = switchboardHooks(options);
  const warnings = current.disableAllHooks === true ? ['"disableAllHooks" is true: no hook will run'] : [];

  const hooks = strip((current.hooks as Json | undefined) ?? {}, options.command);
  for (const [event, groups] of Object.entries(ours)) {
    hooks[event] = [...((hooks[event] as Json[] | undefined) ?? []), ...groups];
  }
  const merged = { ...current, hooks };
  // Already installed exactly (wherever the user moved our groups): keep their file as it is.
  if (installedExactly(current, ours, options.command))
    return { kind: 'ok', settings: current, changed: false, warnings };
  return { kind: 'ok', settings: merged, changed: !isDeepStrictEqual(merged, base), warnings };
}

function installedExactly(settings: Json, ours: Record<string, Json[]>, command?: string): boolean {
  const hooks = isRecord(settings.hooks) ? settings.hooks : {};
  let found = 0;
  for (const [event, groups] of Object.entries(hooks)) {
    for (const group of groups as Json[]) {
      const handlers = (group.hooks as unknown[] | undefined) ?? [];
      if (!handlers.some((h) => isSwitchboardHandler(h, command))) continue;
      if (!ours[event]?.some((g) => isDeepStrictEqual(g, group))) return false;
      found += 1;
    }
  }
  return found === Object.keys(ours).length;
}

/** The reverse, for uninstalling: every Switchboard handler goes, everything else stays. */
export function removeClaudeCodeHooks(settings: unknown, command?: string): MergeOutcome {
  const base = settings === undefined || settings === null ? {} : settings;
  if (!isRecord(base)) return { kind: 'invalid', problem: 'the settings file is not a JSON object' };
  const problem = problemWith(base);
  if (problem) return { kind: 'invalid', problem };
  if (base.hooks === undefined)
    return { kind: 'ok', settings: structuredClone(base), changed: false, warnings: [] };
  const next: Json = { ...structuredClone(base), hooks: strip(base.hooks as Json, command) };
  return { kind: 'ok', settings: next, changed: !isDeepStrictEqual(next, base), warnings: [] };
}
