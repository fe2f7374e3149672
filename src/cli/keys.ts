import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ApiKeyConfig } from '../config/schema.js';
import { keySecret } from '../kernel/auth.js';
import { loadCliConfig } from './context.js';
import { writeAtomically } from './files.js';
import { missingKeyReason } from './startup.js';

/**
 * `switchboard keys list|show|rotate`: the API keys `switchboard init` generated into owner-only files
 * (`key_file`), so they survive the shell and the reboot. Keys from `key_env` or a literal `key` are
 * listed and shown but not rotated here: their owner is wherever the variable is set.
 */

/** 32 random bytes, base64url, with a prefix that says what it is when it turns up in a paste. */
export function generateKey(): string {
  return `sb_${randomBytes(32).toString('base64url')}`;
}

/** Writes a key file readable by its owner only, in a directory only its owner can list. */
export function writeKeyFile(path: string, secret: string): void {
  const dir = dirname(resolve(path));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  writeAtomically(resolve(path), `${secret}\n`, 0o600);
}

/** Creates the file of every `key_file` key that has none yet; returns the names it generated. */
export function ensureKeyFiles(keys: readonly ApiKeyConfig[]): string[] {
  const made: string[] = [];
  for (const k of keys) {
    if (k.key_file === undefined || existsSync(resolve(k.key_file))) continue;
    writeKeyFile(k.key_file, generateKey());
    made.push(k.name);
  }
  return made;
}

interface KeysOptions {
  config?: string;
  json?: boolean;
}

const out = (line: string) => process.stdout.write(`${line}\n`);

function sourceOf(k: ApiKeyConfig): string {
  if (k.key_file !== undefined) return `file ${resolve(k.key_file)}`;
  if (k.key_env !== undefined) return `env $${k.key_env}`;
  return 'literal in the config';
}

function findKey(name: string, opts: KeysOptions): ApiKeyConfig {
  const { config, source } = loadCliConfig(opts);
  const k = config.auth.keys.find((x) => x.name === name);
  if (!k) {
    const names = config.auth.keys.map((x) => x.name).join(', ') || 'none';
    throw new Error(`no key named ${name} in ${source} (its keys: ${names})`);
  }
  return k;
}

export function list(opts: KeysOptions): void {
  const { config, source } = loadCliConfig(opts);
  if (config.auth.keys.length === 0) {
    process.stderr.write(
      `switchboard: ${source} names no keys; \`switchboard init\` writes a config with three\n`,
    );
    return;
  }
  for (const k of config.auth.keys) {
    const present = keySecret(k) !== undefined;
    if (opts.json)
      out(JSON.stringify({ name: k.name, role: k.role, source: sourceOf(k), present, task_id: k.task_id }));
    else
      out(
        `${k.name.padEnd(16)} ${k.role.padEnd(9)} ${sourceOf(k)}${present ? '' : `  MISSING: ${missingKeyReason(k)}`}`,
      );
  }
}

/** Prints the secret alone on stdout, so `$(switchboard keys show me)` is the key. */
export function show(name: string, opts: KeysOptions): void {
  const k = findKey(name, opts);
  const secret = keySecret(k);
  if (!secret) throw new Error(`key ${name}: ${missingKeyReason(k)}`);
  out(secret);
}

export function rotate(name: string, opts: KeysOptions): void {
  const k = findKey(name, opts);
  if (k.key_file === undefined) {
    throw new Error(
      `key ${name} comes from ${sourceOf(k)}, not a key file: change it there (or switch it to key_file: and run rotate again)`,
    );
  }
  writeKeyFile(k.key_file, generateKey());
  process.stderr.write(
    `switchboard: wrote a new key for ${name} to ${resolve(k.key_file)}; the old one works until the gateway restarts (switchboard service status, or stop and start serve). Hooks and the MCP server read the file on each call.\n`,
  );
}
