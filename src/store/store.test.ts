import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, PG_URL, type TestStore } from './testing.js';
import { AppError } from '../errors/index.js';
import { appMigrations } from '../server/modules.js';
import { loadMigrations, migrate, schemaVersion } from './migrate.js';
import { PostgresDb } from './postgres.js';

const DIALECTS = await dialects();

/** A migration folder holding the same files for both dialects. */
function migrationFolder(files: Record<string, string>): URL {
  const dir = mkdtempSync(join(tmpdir(), 'sb-mig-'));
  for (const dialect of ['sqlite', 'postgres']) {
    mkdirSync(join(dir, dialect));
    for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, dialect, name), sql);
  }
  return pathToFileURL(`${dir}/`);
}

describe('migrations', () => {
  it('holds the same numbered versions for SQLite and PostgreSQL', () => {
    const names = (d: 'sqlite' | 'postgres') =>
      loadMigrations(d, appMigrations()).map((m) => `${m.version}_${m.name}`);
    expect(names('sqlite')).toEqual(names('postgres'));
    expect(names('sqlite').length).toBeGreaterThan(0);
  });
});

describe.each(DIALECTS)('store contract on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  it('reaches the latest migration version, and migrating again changes nothing', async () => {
    store = await freshStore(dialect);
    const latest = Math.max(...loadMigrations(dialect, appMigrations()).map((m) => m.version));
    expect(await schemaVersion(store.db)).toBe(latest);
    expect(await migrate(store.db, appMigrations())).toEqual([]);
  });

  it('applies pending migrations all or none, naming the one that failed', async () => {
    store = await freshStore(dialect);
    const folder = migrationFolder({
      '9980_first.sql': 'CREATE TABLE mig_first (id INTEGER PRIMARY KEY);',
      '9981_broken.sql': 'CREATE TABLE mig_second (id INTEGER PRIMARY KEY); CREATE TABL oops;',
    });
    await expect(migrate(store.db, [folder])).rejects.toThrow(/^migration 9981_broken: /);
    const tables = await store.db.query({
      text:
        dialect === 'postgres'
          ? "SELECT 1 WHERE to_regclass('mig_first') IS NOT NULL OR to_regclass('mig_second') IS NOT NULL"
          : "SELECT 1 FROM sqlite_master WHERE name IN ('mig_first', 'mig_second')",
    });
    expect(tables).toEqual([]);
    const recorded = await store.db.query({
      text: 'SELECT version FROM schema_migrations WHERE version >= 9980',
    });
    expect(recorded).toEqual([]);
  });

  it.runIf(dialect === 'postgres')(
    'lets two replicas migrate one new schema at once, each migration applied once',
    async () => {
      store = await freshStore(dialect);
      const schema = `${store.location}_b`;
      const a = await new PostgresDb({ url: PG_URL, schema, max: 2 }).open();
      const b = await new PostgresDb({ url: PG_URL, schema, max: 2 }).open();
      try {
        const [x, y] = await Promise.all([migrate(a, appMigrations()), migrate(b, appMigrations())]);
        const all = loadMigrations('postgres', appMigrations()).map((m) => m.version);
        expect([...x, ...y].sort((p, q) => p - q)).toEqual(all);
        expect(await schemaVersion(a)).toBe(Math.max(...all));
      } finally {
        await a.close();
        await b.close();
        const admin = new pg.Client({ connectionString: PG_URL });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      }
    },
  );

  it('binds $n placeholders in order, including a repeated one', async () => {
    store = await freshStore(dialect);
    const rows = await store.db.query<{ a: string; b: number; c: string }>({
      text: 'SELECT $1 AS a, $2 AS b, $1 AS c',
      values: ['x', 7],
    });
    expect(rows[0]).toMatchObject({ a: 'x', c: 'x' });
    expect(Number(rows[0]!.b)).toBe(7);
  });

  it('runs after-commit hooks once the write is visible, and never for a rolled-back transaction', async () => {
    store = await freshStore(dialect);
    const { db } = store;
    const seen: string[] = [];
    let seenByOthers: Promise<number> | undefined;
    const insert = (tx: typeof db, id: string) =>
      tx.query({
        text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
        values: ['hooks', id, 1],
      });
    const visible = async (id: string) =>
      (await db.query({ text: 'SELECT event_id FROM inbox WHERE event_id = $1', values: [id] })).length;
    const committed = db.tx(async (tx) => {
      await insert(tx, 'h1');
      // Nested transactions join the outer one: their hooks wait for the outer commit too.
      await tx.tx(async (inner) => {
        inner.afterCommit(() => seen.push('inner'));
      });
      tx.afterCommit(() => {
        seen.push('outer');
        // Another connection (PostgreSQL) or the next statement (SQLite) sees the committed row.
        seenByOthers = visible('h1');
      });
      expect(seen).toEqual([]);
    });
    // The expectation is attached at once: a rejection left unobserved while `committed` settles is
    // an unhandled rejection, which fails the run.
    const failed = expect(
      db.tx(async (tx) => {
        await insert(tx, 'h2');
        tx.afterCommit(() => seen.push('rolled-back'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await committed;
    await failed;
    expect(seen).toEqual(['inner', 'outer']);
    expect(await seenByOthers).toBe(1);
    // A plain port runs the hook on the next turn.
    const plain = new Promise<void>((r) => db.afterCommit(r));
    await plain;
  });

  it('commits a transaction as a whole and rolls it back as a whole', async () => {
    store = await freshStore(dialect);
    const { db } = store;
    await db.tx(async (tx) => {
      await tx.query({
        text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
        values: ['c', 'e1', 1],
      });
    });
    await expect(
      db.tx(async (tx) => {
        await tx.query({
          text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
          values: ['c', 'e2', 1],
        });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await db.query<{ event_id: string }>({
      text: 'SELECT event_id FROM inbox ORDER BY event_id',
    });
    expect(rows.map((r) => r.event_id)).toEqual(['e1']);
  });

  it('keeps a statement issued outside a transaction out of a concurrent transaction', async () => {
    store = await freshStore(dialect);
    const { db } = store;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const tx = db.tx(async (t) => {
      await t.query({
        text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
        values: ['c', 'in-tx', 1],
      });
      await gate;
      throw new Error('rollback');
    });
    const outside = db.query({
      text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
      values: ['c', 'outside', 1],
    });
    setTimeout(release, 20);
    await expect(tx).rejects.toThrow('rollback');
    await outside;
    const rows = await db.query<{ event_id: string }>({ text: 'SELECT event_id FROM inbox' });
    expect(rows.map((r) => r.event_id)).toEqual(['outside']);
  });

  it('counts its commits, committed transactions and statements', async () => {
    store = await freshStore(dialect);
    const { db } = store;
    const before = db.stats!();
    await db.tx(async (tx) => {
      await tx.query({ text: 'SELECT 1 AS one' });
      await tx.query({
        text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
        values: ['stats', 's1', 1],
      });
    });
    await db.query({
      text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
      values: ['stats', 's2', 1],
    });
    await db.query({ text: 'SELECT COUNT(*) AS n FROM inbox' });
    await expect(db.tx(async () => Promise.reject(new Error('rolled back')))).rejects.toThrow();
    const after = db.stats!();
    expect({
      commits: after.commits - before.commits,
      transactions: after.transactions - before.transactions,
      statements: after.statements - before.statements,
    }).toEqual({ commits: 2, transactions: 2, statements: 4 });
  });

  it('round-trips bytes, big integers below 2^53 and nulls', async () => {
    store = await freshStore(dialect);
    const { db } = store;
    const bytes = Buffer.from([0, 1, 2, 255]);
    await db.query({
      text: `INSERT INTO vault (ref, tenant_id, digest, iv, tag, ciphertext, key_id, created_at, expires_at) VALUES ($1, 't', 'd', $2, $2, $2, 'k', $3, $4)`,
      values: ['r1', bytes, 1_700_000_000_123, null],
    });
    const row = (
      await db.query<{ iv: Buffer; created_at: number; expires_at: null }>({
        text: 'SELECT iv, created_at, expires_at FROM vault',
      })
    )[0]!;
    expect(Buffer.from(row.iv)).toEqual(bytes);
    expect(row.created_at).toBe(1_700_000_000_123);
    expect(row.expires_at).toBeNull();
  });
});

describe('store errors', () => {
  it('reports an unreachable PostgreSQL as store_unavailable with the reason', async () => {
    const db = new PostgresDb({ url: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMs: 1000 });
    const err = await db.open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('store_unavailable');
    await db.close();
  });
});

describe('a full SQLite disk', () => {
  it('answers store_full with a clear message and keeps what was committed', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { SqliteDb } = await import('./sqlite.js');
    const { EventLog } = await import('../log/log.js');
    const { verifyChain } = await import('../log/verify.js');
    const dir = mkdtempSync(join(tmpdir(), 'sb-full-'));
    const db = new SqliteDb({ path: join(dir, 'full.db'), synchronous: 'normal' });
    try {
      await migrate(db, appMigrations());
      // max_page_count makes SQLite report SQLITE_FULL exactly as a full disk does.
      const pages = Number(db.driver.pragma('page_count', { simple: true }));
      db.driver.pragma(`max_page_count = ${pages + 8}`);
      const log = new EventLog(db, { tenant_id: 't', environment: 'e' });
      let err: unknown;
      let written = 0;
      for (let i = 0; i < 200 && !err; i++) {
        try {
          await log.append({ type: 'agent.tool.requested', redacted_summary: { pad: 'x'.repeat(4000) } });
          written++;
        } catch (e) {
          err = e;
        }
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('store_full');
      expect((err as AppError).status).toBe(507);
      expect(await verifyChain(db)).toMatchObject({ ok: true, count: written });
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
