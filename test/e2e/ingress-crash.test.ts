import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { githubDelivery, githubExample } from '../../src/ingress/testing.js';
import type { Db, Dialect } from '../../src/store/port.js';
import { SqliteDb } from '../../src/store/sqlite.js';
import { dialects, freshStore, PG_URL } from '../../src/store/testing.js';
import { CLI, requireBuild } from '../../src/cli/testing.js';

/**
 * Seed 001's fault case: the server is SIGKILLed during a flood of webhooks. Every delivery that was
 * answered 2xx must be there after a restart on the same data dir, and admitted exactly once.
 */

const SECRET = 'crash-test-github-secret';
const ADMIN_KEY = 'admin-key-for-the-crash-test';
/** Enough concurrency that the kill lands while requests and admissions are in flight. */
const CONCURRENCY = 20;
/** Kill after this many 2xx answers, so there is committed work and work in flight at the kill. */
const KILL_AFTER = 60;

const CONFIG = `data_dir: ./data
server:
  host: 127.0.0.1
  port: 0
store:
  sqlite_synchronous: normal
tenant: { id: default, environment: test }
auth:
  keys:
    - { name: ops, role: admin, key_env: SB_ADMIN_KEY }
sources:
  github: { type: github, secret_env: GH_SECRET }
triggers:
  - id: every-push
    source: github
    when: 'event.name == "push"'
    action: { type: notify }
log:
  level: info
`;

const ENV = {
  PATH: process.env.PATH ?? '',
  GH_SECRET: SECRET,
  SB_ADMIN_KEY: ADMIN_KEY,
  SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64'),
};

interface Running {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}

function serve(cwd: string, env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
    cwd,
    env: { ...ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 10_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code} before listening: ${out}`));
    });
  });
}

/** Sends signed pushes from CONCURRENCY workers until the server dies; returns the 2xx'd delivery ids. */
async function floodUntilKilled(run: Running): Promise<string[]> {
  const payload = githubExample('push');
  const ok: string[] = [];
  let dead = false;
  let n = 0;
  void run.exited.then(() => {
    dead = true;
  });
  const worker = async () => {
    while (!dead) {
      const d = await githubDelivery('push', payload, { secret: SECRET, delivery: `crash-${++n}` });
      try {
        const res = await fetch(`${run.url}/v1/ingress/github`, {
          method: 'POST',
          headers: d.headers,
          body: d.body,
        });
        await res.arrayBuffer();
        if (res.status >= 200 && res.status < 300) {
          ok.push(d.delivery);
          // A random extra delay so the kill lands at an arbitrary point of a request or an admission.
          if (ok.length === KILL_AFTER)
            setTimeout(() => run.child.kill('SIGKILL'), Math.floor(Math.random() * 20));
        }
      } catch {
        // The connection died with the server: this delivery was not acknowledged.
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return ok;
}

/**
 * The killed process held relay leases on the outbox rows it was working on; a restart picks them up
 * only when the lease (30 s) runs out. Rather than wait it out, the test moves those leases into the past,
 * which is what the passing of time would do.
 */
async function expireLeases(target: Target): Promise<void> {
  const db = await target.open();
  try {
    await db.query({ text: "UPDATE outbox SET lease_until = 0 WHERE status = 'claimed'" });
  } finally {
    await db.close();
  }
}

/** Where the gateway keeps its store, and a second connection to it for the checks. */
interface Target {
  env: Record<string, string>;
  open(): Promise<Db>;
  cleanup(): Promise<void>;
}

async function target(dialect: Dialect, cwd: string): Promise<Target> {
  if (dialect === 'sqlite')
    return {
      env: {},
      open: async () => new SqliteDb({ path: join(cwd, 'data', 'switchboard.db') }),
      cleanup: async () => {},
    };
  // A fresh schema, named to the gateway through libpq's `options` so both processes share it.
  const store = await freshStore('postgres');
  await store.db.close();
  return {
    env: {
      SWITCHBOARD_DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${store.location}`)}`,
    },
    open: () => store.reopen(),
    cleanup: () => store.cleanup(),
  };
}

interface Decision {
  delivery_id: string;
  type: string;
}

async function adminGet<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Every admission decision (admitted or dropped) in the log, paging through the events API. */
async function decisions(url: string): Promise<Decision[]> {
  const out: Decision[] = [];
  for (const type of ['integration.webhook.admitted', 'integration.webhook.dropped']) {
    let after = 0;
    for (;;) {
      const page = await adminGet<{
        events: Array<{ type: string; redacted_summary?: { delivery_id?: string } }>;
        next_after: number;
      }>(`${url}/v1/events?type=${type}&limit=1000&after=${after}`);
      for (const e of page.events)
        out.push({ type: e.type, delivery_id: e.redacted_summary?.delivery_id ?? '' });
      if (page.events.length === 0) break;
      after = page.next_after;
    }
  }
  return out;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(await dialects())('the gateway on %s SIGKILLed during a webhook flood', (dialect) => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const targets: Target[] = [];
  beforeAll(requireBuild);
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const t of targets.splice(0)) await t.cleanup();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('keeps every acknowledged delivery and admits each exactly once after a restart', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sb-ingress-crash-'));
    dirs.push(cwd);
    writeFileSync(join(cwd, 'switchboard.yaml'), CONFIG);
    const store = await target(dialect, cwd);
    targets.push(store);

    const first = await serve(cwd, store.env);
    children.push(first.child);
    const acknowledged = await floodUntilKilled(first);
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);

    await expireLeases(store);
    const second = await serve(cwd, store.env);
    children.push(second.child);
    // Admission drains: one decision for each acknowledged delivery (and for any stored one the kill cut off before its answer).
    const all = await waitFor('admission to drain', async () => {
      const ds = await decisions(second.url);
      const seen = new Set(ds.map((d) => d.delivery_id));
      return acknowledged.every((id) => seen.has(id)) ? ds : undefined;
    });
    // Give a stray duplicate a moment to show up before counting.
    await new Promise((r) => setTimeout(r, 700));
    const final = await decisions(second.url);
    expect(final.length).toBeGreaterThanOrEqual(all.length);
    const counts = new Map<string, number>();
    for (const d of final) counts.set(d.delivery_id, (counts.get(d.delivery_id) ?? 0) + 1);
    for (const id of acknowledged) expect(counts.get(id), id).toBe(1);
    for (const [id, n] of counts) expect(n, id).toBe(1);

    second.child.kill('SIGTERM');
    await second.exited;
    const audit = spawnSync(process.execPath, [CLI, 'audit', 'verify'], {
      cwd,
      env: { ...ENV, ...store.env },
      encoding: 'utf8',
    });
    expect(audit.stderr).toBe('');
    expect(audit.status).toBe(0);

    const db = await store.open();
    try {
      const rows = await db.query<{ delivery_id: string; status: string }>({
        text: "SELECT delivery_id, status FROM ingress_deliveries WHERE source = 'github'",
      });
      const stored = new Map(rows.map((r) => [r.delivery_id, r.status]));
      for (const id of acknowledged) expect(stored.get(id), id).toMatch(/^(processed|failed)$/);
      // A delivery stored just before the kill but never answered is admitted once too.
      for (const id of stored.keys()) expect(counts.get(id), id).toBe(1);
    } finally {
      await db.close();
    }
  }, 30_000);
});
