import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { classifyStoreError } from './errors.js';
import { Mutex } from './mutex.js';
import { type Db, type Row, runHooks, type Sql } from './port.js';

export interface SqliteOptions {
  /** File path, or `:memory:`. */
  path: string;
  /** `full` makes every commit durable on power loss; `normal` only on process crash. */
  synchronous?: 'full' | 'normal';
  busyTimeoutMs?: number;
}

/** Statements that never write: they skip the write path (and its BEGIN IMMEDIATE). */
const READ_ONLY = /^\s*(SELECT|PRAGMA\s+\w+\s*$|EXPLAIN)\b/i;

/** How many waiting transactions one commit may carry; bounds the latency one batch adds. */
const MAX_GROUP = 256;

type Statement = Database.Statement<unknown[] | Record<string, unknown>, unknown>;

function bindable(values: readonly unknown[] | undefined): Record<string, unknown> {
  // SQLite reads `$1` as a named parameter called "1", so the positional values become an object.
  const out: Record<string, unknown> = {};
  if (!values) return out;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out[String(i + 1)] = v === undefined ? null : typeof v === 'boolean' ? (v ? 1 : 0) : v;
  }
  return out;
}

/**
 * SQLite behind the port. One connection; the mutex keeps a transaction's statements together, because
 * with a single connection any statement issued while a transaction is open would silently join it.
 * Statements are prepared once per text. WAL lets readers in other processes (the CLI) see committed
 * data while the server writes.
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  readonly inTransaction = false;
  private readonly raw: Database.Database;
  private readonly mutex = new Mutex();
  private readonly statements = new Map<string, Statement>();
  private readonly queue: {
    fn: (db: Db) => Promise<unknown>;
    resolve: (v: unknown) => void;
    reject: (e: unknown) => void;
  }[] = [];
  private flushQueued = false;

  constructor(opts: SqliteOptions) {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    try {
      this.raw = new Database(opts.path);
      this.raw.pragma('journal_mode = WAL');
      this.raw.pragma(`synchronous = ${opts.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
      this.raw.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
      this.raw.pragma('foreign_keys = ON');
    } catch (err) {
      throw classifyStoreError(err);
    }
  }

  /** The driver, for the few places that need it (benchmarks, the crash test). */
  get driver(): Database.Database {
    return this.raw;
  }

  private statement(text: string): Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.raw.prepare(text) as Statement;
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  /** Runs a statement now, without the mutex: only for callers that already hold it. */
  runNow<T = Row>(q: Sql): T[] {
    try {
      if (q.script) {
        this.raw.exec(q.text);
        return [];
      }
      const stmt = this.statement(q.text);
      const params = bindable(q.values);
      if (stmt.reader) return stmt.all(params) as T[];
      stmt.run(params);
      return [];
    } catch (err) {
      throw classifyStoreError(err);
    }
  }

  query<T = Row>(q: Sql): Promise<T[]> {
    // A lone write commits like a transaction, so it joins the next group commit instead of paying an
    // fsync of its own; reads run at once.
    if (q.script || !READ_ONLY.test(q.text)) return this.tx((t) => t.query<T>(q));
    return this.mutex.run(async () => this.runNow<T>(q));
  }

  /**
   * Group commit: transactions that arrive while another commits wait together and share the next
   * BEGIN … COMMIT, each inside its own SAVEPOINT. One that throws rolls back to its savepoint alone;
   * none is answered before the COMMIT that makes it durable. With `synchronous=FULL` a commit costs an
   * fsync, so N concurrent writers pay one fsync instead of N (see bench/core.ts).
   */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        fn: fn as (db: Db) => Promise<unknown>,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      if (!this.flushQueued) {
        this.flushQueued = true;
        void this.mutex.run(() => this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.flushQueued = false;
    const batch = this.queue.splice(0, MAX_GROUP);
    if (this.queue.length > 0) {
      this.flushQueued = true;
      void this.mutex.run(() => this.flush());
    }
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: unknown; hooks: (() => void)[] } | { ok: false; error: unknown })[] =
      [];
    try {
      // IMMEDIATE takes the write lock up front, so two processes never both read-then-write and deadlock.
      this.runNow({ text: 'BEGIN IMMEDIATE' });
    } catch (err) {
      for (const item of batch) item.reject(err);
      return;
    }
    for (const item of batch) {
      const bound = new SqliteTx(this);
      const single = batch.length === 1;
      try {
        if (!single) this.raw.exec('SAVEPOINT sb_group');
        const value = await item.fn(bound);
        if (!single) this.raw.exec('RELEASE sb_group');
        outcomes.push({ ok: true, value, hooks: bound.hooks });
      } catch (err) {
        if (!single && this.raw.inTransaction) {
          this.raw.exec('ROLLBACK TO sb_group');
          this.raw.exec('RELEASE sb_group');
        }
        outcomes.push({ ok: false, error: classifyStoreError(err) });
      } finally {
        bound.closed = true;
      }
    }
    try {
      if (batch.length === 1 && !outcomes[0]!.ok) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
      } else {
        this.runNow({ text: 'COMMIT' });
      }
    } catch (err) {
      if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
      for (const item of batch) item.reject(classifyStoreError(err));
      return;
    }
    batch.forEach((item, i) => {
      const o = outcomes[i]!;
      if (o.ok) {
        runHooks(o.hooks);
        item.resolve(o.value);
      } else item.reject(o.error);
    });
  }

  afterCommit(fn: () => void): void {
    setImmediate(() => runHooks([fn]));
  }

  async close(): Promise<void> {
    await this.mutex.run(async () => {
      if (this.raw.open) this.raw.close();
    });
  }
}

class SqliteTx implements Db {
  readonly dialect = 'sqlite' as const;
  readonly inTransaction = true;
  closed = false;
  readonly hooks: (() => void)[] = [];

  constructor(private readonly db: SqliteDb) {}

  async query<T = Row>(q: Sql): Promise<T[]> {
    if (this.closed)
      throw new Error('transaction already finished: use the port the caller holds, not one kept from a tx');
    return this.db.runNow<T>(q);
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this);
  }

  afterCommit(fn: () => void): void {
    this.hooks.push(fn);
  }

  async close(): Promise<void> {}
}
