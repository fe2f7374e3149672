import { resolve } from 'node:path';
import { parse } from 'yaml';
import { configPath } from '../config/load.js';
import { readKeyFile } from '../kernel/auth.js';
import { readIfPresent } from './files.js';
/**
 * How client commands (`approvals`, `incidents`, …) talk to the gateway: `$SWITCHBOARD_URL` (default
 * http://127.0.0.1:8787, CONTRACT.md) with `$SWITCHBOARD_KEY`, JSON in and out, and every failure turned
 * into one line that says what to fix.
 */

export const DEFAULT_URL = 'http://127.0.0.1:8787';

type Role = 'agent' | 'approver' | 'admin';

/**
 * The key a client command uses: `$SWITCHBOARD_KEY`, else the file `$SWITCHBOARD_KEY_FILE` names, else
 * (in the gateway's folder) the first key of one of `roles` that the config keeps in a key file, as
 * `switchboard init` writes it. So `switchboard away on` works where the gateway runs, in a new shell,
 * with nothing exported. Undefined when none is found.
 */
export function clientKey(
  env: NodeJS.ProcessEnv,
  roles: readonly Role[],
  cwd = process.cwd(),
): string | undefined {
  if (env.SWITCHBOARD_KEY) return env.SWITCHBOARD_KEY;
  if (env.SWITCHBOARD_KEY_FILE) return readKeyFile(resolve(cwd, env.SWITCHBOARD_KEY_FILE));
  const path = configPath(env, cwd);
  const text = path ? readIfPresent(path) : undefined;
  if (!text) return undefined;
  let keys: unknown;
  try {
    keys = (parse(text) as { auth?: { keys?: unknown } } | null)?.auth?.keys;
  } catch {
    return undefined;
  }
  if (!Array.isArray(keys)) return undefined;
  for (const role of roles) {
    for (const k of keys as { role?: unknown; key_file?: unknown; task_id?: unknown }[]) {
      if (k?.role !== role || typeof k.key_file !== 'string' || k.task_id !== undefined) continue;
      const secret = readKeyFile(resolve(cwd, k.key_file));
      if (secret) return secret;
    }
  }
  return undefined;
}

export interface ClientOptions {
  /** Overrides `SWITCHBOARD_URL`. */
  url?: string;
  /** Injected in tests; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

export interface ClientMessages {
  /** The roles that may do this, in the order a key file of the local config is tried. */
  roles: readonly Role[];
  /** When the gateway answers 403; gets the error code and message. */
  forbidden: (error: { code?: string; message?: string } | undefined) => string;
}

/**
 * The three ways a client command fails before the gateway has said anything of substance, worded
 * once for every command (`approvals`, `away`, `dlq`, `incidents`, `ingress`, `tasks`, `touch`, …).
 */
export function noKeyMessage(roles: readonly Role[]): string {
  const what = roles.length
    ? `${/^[aeiou]/.test(roles[0]!) ? 'an' : 'a'} ${roles.join(' or ')} key`
    : 'a key';
  return `no key for the gateway: set SWITCHBOARD_KEY to ${what} (\`switchboard keys show <name>\` prints one), or run this in the gateway's folder, where its key files are`;
}

export function unreachableMessage(base: string, err: unknown): string {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return `Switchboard gateway unreachable at ${base}${code ? ` (${code})` : ''}; start it with \`switchboard serve\` in its folder, or point SWITCHBOARD_URL at it`;
}

export function unauthorizedMessage(base: string): string {
  return `the gateway at ${base} refused the key (401): it is not one of its keys; \`switchboard keys list\` in the gateway's folder shows them`;
}

export async function gatewayCall(
  method: string,
  path: string,
  opts: ClientOptions,
  messages: ClientMessages,
  body?: unknown,
): Promise<unknown> {
  const env = opts.env ?? process.env;
  const base = (opts.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  const key = clientKey(env, messages.roles);
  if (!key) throw new Error(noKeyMessage(messages.roles));
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    throw new Error(unreachableMessage(base, err));
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.ok) return parsed;
  const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
  if (res.status === 401) throw new Error(unauthorizedMessage(base));
  if (res.status === 403) throw new Error(messages.forbidden(error));
  throw new Error(
    `${error?.message ?? `the gateway answered ${res.status}`}${error?.code ? ` (${error.code})` : ''}`,
  );
}
