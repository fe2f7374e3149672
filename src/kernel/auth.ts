import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { MiddlewareHandler } from 'hono';
import type { ApiKeyConfig } from '../config/schema.js';
import { AppError } from '../errors/index.js';
import { activeSpan, tracer } from '../trace/span.js';
import type { AppEnv, Principal, Role } from './module.js';

interface KeyEntry {
  digest: Buffer;
  principal: Principal;
}

/**
 * Bearer keys from config. Keys are compared by their SHA-256 digests with timingSafeEqual, so the time
 * taken says nothing about how much of a guess was right; the lookup walks every key for the same reason.
 */
export class KeyRing {
  private readonly entries: KeyEntry[] = [];

  constructor(keys: ApiKeyConfig[], env: NodeJS.ProcessEnv = process.env) {
    for (const k of keys) {
      const secret = keySecret(k, env);
      // A key whose variable is unset (or whose file is missing) is skipped, not an error: `doctor` lists it so the user can fix it.
      if (!secret) continue;
      const principal: Principal = { name: k.name, role: k.role };
      if (k.task_id) principal.task_id = k.task_id;
      this.entries.push({ digest: digest(secret), principal });
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** Adds a key at run time (launched agents get task-scoped keys). */
  add(secret: string, principal: Principal): void {
    this.entries.push({ digest: digest(secret), principal });
  }

  /** Revokes a key added at run time (a task's key dies with its task). Returns whether one was removed. */
  remove(secret: string): boolean {
    const d = digest(secret);
    const before = this.entries.length;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (timingSafeEqual(this.entries[i]!.digest, d)) this.entries.splice(i, 1);
    }
    return this.entries.length < before;
  }

  /**
   * The principal of the key for which `mac(sha256(key))` equals `target`; every key is checked, each
   * in constant time. A console session keeps only such a MAC (under its own key), so it can ask on
   * every request whether its key is still configured: rotating or removing a key ends its sessions.
   */
  resolveMac(mac: (digest: Buffer) => Buffer, target: Buffer): Principal | undefined {
    let found: Principal | undefined;
    for (const e of this.entries) {
      const m = mac(e.digest);
      if (m.length === target.length && timingSafeEqual(m, target)) found = e.principal;
    }
    return found;
  }

  resolve(secret: string): Principal | undefined {
    const d = digest(secret);
    let found: Principal | undefined;
    for (const e of this.entries) {
      if (timingSafeEqual(e.digest, d)) found = e.principal;
    }
    return found;
  }
}

/** A configured key's secret: literal, from its variable, or from its file; undefined when absent. */
export function keySecret(k: ApiKeyConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (k.key !== undefined) return k.key;
  if (k.key_env !== undefined) return env[k.key_env] || undefined;
  if (k.key_file !== undefined) return readKeyFile(k.key_file);
  return undefined;
}

/** The first line of a key file, trimmed; undefined when it is missing, unreadable or empty. */
export function readKeyFile(path: string): string | undefined {
  try {
    return readFileSync(resolve(path), 'utf8').split('\n')[0]!.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The SHA-256 of a key, as the ring keeps it (see `resolveMac`). */
export function keyDigest(secret: string): Buffer {
  return digest(secret);
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Requires a valid key with one of `roles`: 401 without a valid key, 403 with the wrong role. */
export function requireRole(keys: KeyRing, ...roles: Role[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearer(c.req.header('authorization'));
    // A step of the request's trace when one is running (telemetry on); otherwise nothing at all.
    const span = activeSpan() ? tracer().startSpan('auth') : undefined;
    const principal = token ? keys.resolve(token) : undefined;
    span?.setAttributes({
      'switchboard.role': principal?.role ?? 'none',
      'switchboard.key': principal?.name ?? '',
    });
    span?.end();
    if (!principal) {
      c.header('WWW-Authenticate', 'Bearer realm="switchboard"');
      throw new AppError('unauthorized');
    }
    if (!roles.includes(principal.role)) {
      throw new AppError(
        'forbidden',
        `this needs a key with role ${roles.join(' or ')}; yours is ${principal.role}`,
      );
    }
    c.set('principal', principal);
    await next();
  };
}
