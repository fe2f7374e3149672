import { fstatSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { EventLog } from '../log/log.js';
import { verifyChain } from '../log/verify.js';
import { appMigrations } from '../server/modules.js';
import { migrate } from './migrate.js';
import type { Db } from './port.js';
import { type SqliteOptions, SqliteDb } from './sqlite.js';

/** Every way `SqliteDb` can reach its write connection; the default first. */
const DESIGNS: [string, Pick<SqliteOptions, 'writer' | 'transport'>][] = [
  ['the connection on the event loop', {}],
  ['the writer thread', { writer: 'thread' }],
  ['the writer thread with sync statements', { writer: 'thread', transport: 'sync' }],
];

const insert = (db: Db, id: string) =>
  db.query({
    text: 'INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)',
    values: ['c', id, 1],
  });

const ids = async (db: Db) =>
  (await db.query<{ event_id: string }>({ text: 'SELECT event_id FROM inbox ORDER BY event_id' })).map(
    (r) => r.event_id,
  );

let dirs: string[] = [];
let opened: SqliteDb[] = [];

async function open(opts: Partial<SqliteOptions> = {}): Promise<{ db: SqliteDb; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-sqlite-'));
  dirs.push(dir);
  const path = join(dir, 'test.db');
  const db = new SqliteDb({ path, synchronous: 'full', ...opts });
  opened.push(db);
  await migrate(db, appMigrations());
  return { db, path };
}

afterEach(async () => {
  for (const db of opened) await db.close().catch(() => {});
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  opened = [];
  dirs = [];
});

describe.each(DESIGNS)('SQLite through %s', (_name, design) => {
  it('makes concurrent transactions share one COMMIT', async () => {
    const { db } = await open(design);
    const before = db.stats();
    await Promise.all(Array.from({ length: 20 }, (_, i) => db.tx((tx) => insert(tx, `e${i}`))));
    const after = db.stats();
    expect(after.commits - before.commits).toBe(1);
    expect(after.transactions - before.transactions).toBe(20);
    expect(after.statements - before.statements).toBe(20);
    expect(await ids(db)).toHaveLength(20);
  });

  it('rolls back only the transaction that throws, and commits the others with it', async () => {
    const { db } = await open(design);
    const before = db.stats().commits;
    const results = await Promise.allSettled([
      db.tx((tx) => insert(tx, 'a')),
      db.tx(async (tx) => {
        await insert(tx, 'b');
        throw new Error('boom');
      }),
      db.tx(async (tx) => {
        // A failed statement the transaction catches leaves the rest of it alone.
        await expect(insert(tx, 'a')).rejects.toThrow(/UNIQUE/);
        await insert(tx, 'c');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await ids(db)).toEqual(['a', 'c']);
    expect(db.stats().commits - before).toBe(1);
  });

  it('keeps the undo pages of its savepoints in memory, not in a temporary file per transaction', async () => {
    const { db } = await open(design);
    // 2 = MEMORY (sqlite-writer.ts): the rollback test above undoes a savepoint from there.
    expect(db.driver.pragma('temp_store', { simple: true })).toBe(2);
  });

  it('runs afterCommit hooks once another connection can read the write', async () => {
    const { db, path } = await open(design);
    const other = new Database(path, { readonly: true });
    try {
      const seen: number[] = [];
      await db.tx(async (tx) => {
        await insert(tx, 'h');
        tx.afterCommit(() => {
          seen.push(
            other.prepare("SELECT COUNT(*) AS n FROM inbox WHERE event_id = 'h'").pluck().get() as number,
          );
        });
        expect(other.prepare('SELECT COUNT(*) FROM inbox').pluck().get()).toBe(0);
      });
      expect(seen).toEqual([1]);
    } finally {
      other.close();
    }
  });

  it('reads its own writes once the transaction has resolved', async () => {
    const { db } = await open(design);
    for (let i = 0; i < 20; i++) {
      await db.tx((tx) => insert(tx, `r${String(i).padStart(2, '0')}`));
      expect(await ids(db)).toHaveLength(i + 1);
    }
  });

  it('keeps one unbroken hash chain under a flood of concurrent appends', async () => {
    const { db } = await open(design);
    const log = new EventLog(db, { tenant_id: 't', environment: 'e' });
    const before = db.stats();
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        log.append({ type: 'agent.tool.requested', correlation_id: `c${i % 9}`, redacted_summary: { i } }),
      ),
    );
    expect(await verifyChain(db)).toMatchObject({ ok: true, count: 200 });
    expect(db.stats().commits - before.commits).toBeLessThan(20);
  });

  it('answers every transaction queued before close, then refuses new ones', async () => {
    const { db } = await open(design);
    const pending = Array.from({ length: 5 }, (_, i) => db.tx((tx) => insert(tx, `q${i}`)));
    await db.close();
    await expect(Promise.all(pending)).resolves.toHaveLength(5);
    const err = await db.tx((tx) => insert(tx, 'late')).catch((e: unknown) => e);
    expect((err as AppError).code).toBe('store_unavailable');
  });
});

describe('a writer thread that dies', () => {
  it('fails the transaction in flight, the queued ones and every later call with store_unavailable', async () => {
    const fatal: AppError[] = [];
    const { db } = await open({ writer: 'thread', onFatal: (e) => fatal.push(e) });
    await db.tx((tx) => insert(tx, 'kept'));
    let inside!: () => void;
    const started = new Promise<void>((r) => {
      inside = r;
    });
    const inFlight = db.tx(async (tx) => {
      await insert(tx, 'lost');
      inside();
      await new Promise((r) => setTimeout(r, 50));
      await insert(tx, 'lost-too');
    });
    const queued = db.tx((tx) => insert(tx, 'queued'));
    await started;
    await db.thread!.terminate();
    for (const p of [
      inFlight,
      queued,
      db.tx((tx) => insert(tx, 'later')),
      db.query({ text: 'DELETE FROM inbox' }),
    ]) {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('store_unavailable');
      expect((err as AppError).message).toMatch(/writer thread stopped/);
    }
    expect(fatal).toHaveLength(1);
    // Reads still work on this thread's connection: what was committed is there, nothing else.
    expect(await ids(db)).toEqual(['kept']);
    await db.close();
  });

  it('leaves the file as of its last commit for the next start-up', async () => {
    const { db, path } = await open({ writer: 'thread', onFatal: () => {} });
    const log = new EventLog(db, { tenant_id: 't', environment: 'e' });
    for (let i = 0; i < 10; i++) await log.append({ type: 'agent.tool.requested', redacted_summary: { i } });
    const cut = log.append({ type: 'agent.tool.requested', redacted_summary: { cut: true } });
    await db.thread!.terminate();
    await expect(cut).rejects.toThrow(/writer thread stopped/);
    await db.close();
    const again = new SqliteDb({ path });
    opened.push(again);
    expect(await verifyChain(again)).toMatchObject({ ok: true });
    expect(
      Number((await again.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM events' }))[0]!.n),
    ).toBeGreaterThanOrEqual(10);
    await new EventLog(again, { tenant_id: 't', environment: 'e' }).append({ type: 'agent.tool.requested' });
    expect(await verifyChain(again)).toMatchObject({ ok: true });
  });
});

describe('synchronous=full with the writer inline: the WAL sync off the event loop', () => {
  /** A `fdatasync` that holds every call until released, and records which file it synced. */
  function heldSync() {
    const calls: { fd: number; done: (err: NodeJS.ErrnoException | null) => void }[] = [];
    return {
      calls,
      syncFile: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
        calls.push({ fd, done });
      },
      release(err: NodeJS.ErrnoException | null = null) {
        for (const c of calls.splice(0)) c.done(err);
      },
    };
  }
  const settled = (p: Promise<unknown>) => {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    return () => done;
  };
  const tick = () => new Promise((r) => setTimeout(r, 20));
  /** A migrated store, reopened with `opts` (a held sync would hold the migrations too). */
  async function reopened(opts: Partial<SqliteOptions>): Promise<{ db: SqliteDb; path: string }> {
    const { db, path } = await open();
    await db.close();
    const again = new SqliteDb({ path, synchronous: 'full', ...opts });
    opened.push(again);
    return { db: again, path };
  }

  it('commits with NORMAL and answers nobody, and shows the write to no read, before the WAL is synced', async () => {
    const sync = heldSync();
    const { db: again, path } = await reopened({ syncFile: sync.syncFile });
    expect(again.driver.pragma('synchronous', { simple: true })).toBe(1);
    const write = again.tx((tx) => insert(tx, 'a'));
    const written = settled(write);
    await tick();
    expect(sync.calls).toHaveLength(1);
    // The descriptor synced is the WAL's.
    expect(fstatSync(sync.calls[0]!.fd).ino).toBe(statSync(`${path}-wal`).ino);
    const read = ids(again);
    const seen = settled(read);
    await tick();
    expect(written()).toBe(false);
    expect(seen()).toBe(false);
    // Another process sees the row: it is committed, only not yet durable.
    const other = new Database(path, { readonly: true });
    expect(other.prepare('SELECT COUNT(*) AS n FROM inbox').get()).toEqual({ n: 1 });
    other.close();
    sync.release();
    await write;
    expect(await read).toEqual(['a']);
    expect(again.stats().commits).toBe(1);
  });

  it('lets the next group commit and start its own sync while one runs; a later sync answers every earlier commit', async () => {
    const sync = heldSync();
    const { db } = await reopened({ syncFile: sync.syncFile });
    const first = db.tx((tx) => insert(tx, 'one'));
    const firstDone = settled(first);
    await tick();
    expect(sync.calls).toHaveLength(1);
    const second = db.tx((tx) => insert(tx, 'two'));
    const third = db.tx((tx) => insert(tx, 'three'));
    await tick();
    // Both later transactions committed in one group while the first sync was held, and its sync began.
    expect(sync.calls).toHaveLength(2);
    // The newer sync returning makes the older commit durable too: both groups are answered.
    sync.calls.splice(1, 1)[0]!.done(null);
    await Promise.all([first, second, third]);
    expect(firstDone()).toBe(true);
    sync.release();
    expect(await ids(db)).toEqual(['one', 'three', 'two']);
  });

  it('holds commits past four syncs under way for one shared sync', async () => {
    const sync = heldSync();
    const { db } = await reopened({ syncFile: sync.syncFile });
    const early: Promise<unknown>[] = [];
    for (let i = 0; i < 4; i++) {
      early.push(db.tx((tx) => insert(tx, `e${i}`)));
      await tick();
    }
    expect(sync.calls).toHaveLength(4);
    const late = [db.tx((tx) => insert(tx, 'l1')), db.tx((tx) => insert(tx, 'l2'))];
    const lateDone = settled(Promise.all(late));
    await tick();
    expect(sync.calls).toHaveLength(4);
    // The oldest sync returns: its commit is answered, and the waiting commits share one new sync.
    sync.calls.shift()!.done(null);
    await early[0];
    await tick();
    expect(lateDone()).toBe(false);
    expect(sync.calls).toHaveLength(4);
    sync.calls.pop()!.done(null);
    await Promise.all([...early, ...late]);
    sync.release();
  });

  it('fails every waiting and later transaction with store_unavailable and calls onFatal once when a sync fails', async () => {
    const sync = heldSync();
    const fatal: AppError[] = [];
    const { db } = await reopened({ syncFile: sync.syncFile, onFatal: (e) => fatal.push(e) });
    const kept = db.tx((tx) => insert(tx, 'kept'));
    await tick();
    sync.release();
    await kept;
    const lost = db.tx((tx) => insert(tx, 'unknown'));
    await tick();
    sync.release(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const outcomes = await Promise.allSettled([lost, db.tx((tx) => insert(tx, 'later')), ids(db)]);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      const err = (o as PromiseRejectedResult).reason;
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('store_unavailable');
    }
    expect(fatal).toHaveLength(1);
  });

  it('is not used by the writer thread, nor with synchronous=normal', async () => {
    const thread = await open({ writer: 'thread' });
    expect(thread.db.driver.pragma('synchronous', { simple: true })).toBe(2);
    const normal = await open({ synchronous: 'normal' });
    expect(normal.db.driver.pragma('synchronous', { simple: true })).toBe(1);
  });
});
