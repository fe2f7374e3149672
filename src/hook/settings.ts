import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuntimeAdapter } from '../runtimes/runtime.js';
import type { FailMode } from '../runtimes/http/fail-closed.js';

/** Where the bridge goes, with which key, how long it waits, and what it does when that fails. */
export interface BridgeSettings {
  url: string;
  key: string | undefined;
  timeoutMs: number;
  fail: FailMode;
}

/** CONTRACT.md: client commands reach the gateway here unless SWITCHBOARD_URL says otherwise. */
export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** Answer before the runtime gives up on the hook, or the runtime decides alone (Claude Code: open). */
export const RUNTIME_TIMEOUT_MARGIN_MS = 10_000;

/** Cursor documents no default hook timeout; 20 s is well inside the 30 s its examples configure. */
export const UNKNOWN_RUNTIME_TIMEOUT_MS = 20_000;

/** A timeout shorter than this would fail every call that touches the store. */
export const MIN_TIMEOUT_MS = 1_000;

export function defaultTimeoutMs(adapter: RuntimeAdapter): number {
  const runtime = adapter.defaultTimeoutMs;
  if (runtime === null) return UNKNOWN_RUNTIME_TIMEOUT_MS;
  return Math.max(MIN_TIMEOUT_MS, runtime - RUNTIME_TIMEOUT_MARGIN_MS);
}

/** `~/.config/switchboard/hook.json` (or under $XDG_CONFIG_HOME): `{ "fail", "timeout_ms", "url", "key_file" }`. */
export function hookFilePath(env: NodeJS.ProcessEnv, home: string): string {
  const base = env.XDG_CONFIG_HOME || join(home, '.config');
  return join(base, 'switchboard', 'hook.json');
}

interface HookFile {
  fail?: unknown;
  timeout_ms?: unknown;
  url?: unknown;
  /** The agent key's file (`switchboard setup` writes the one `switchboard init` generated). */
  key_file?: unknown;
}

function readHookFile(path: string): HookFile {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as HookFile) : {};
  } catch {
    // Missing or unreadable: the defaults apply, and the defaults fail closed.
    return {};
  }
}

const failMode = (value: unknown): FailMode | undefined =>
  value === 'closed' || value === 'open' ? value : undefined;

function positive(value: unknown): number | undefined {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0
    ? Math.max(MIN_TIMEOUT_MS, Math.floor(n))
    : undefined;
}

/** The environment wins over the file; anything unreadable falls back to a default that fails closed. */
export function bridgeSettings(
  adapter: RuntimeAdapter,
  env: NodeJS.ProcessEnv,
  home: string,
): BridgeSettings {
  const file = readHookFile(hookFilePath(env, home));
  return {
    url: env.SWITCHBOARD_URL || (typeof file.url === 'string' && file.url) || DEFAULT_URL,
    key:
      env.SWITCHBOARD_KEY ||
      keyFromFile(env.SWITCHBOARD_KEY_FILE || (typeof file.key_file === 'string' ? file.key_file : '')),
    timeoutMs:
      positive(env.SWITCHBOARD_HOOK_TIMEOUT_MS) ?? positive(file.timeout_ms) ?? defaultTimeoutMs(adapter),
    fail: failMode(env.SWITCHBOARD_HOOK_FAIL) ?? failMode(file.fail) ?? 'closed',
  };
}

/**
 * A key file's first line. Read on every call, so `switchboard keys rotate` reaches hooks without a
 * restart of the runtime. Missing or unreadable: no key (the gateway answers 401, which the bridge reports).
 */
export function keyFromFile(path: string): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8').split('\n')[0]!.trim() || undefined;
  } catch {
    return undefined;
  }
}
