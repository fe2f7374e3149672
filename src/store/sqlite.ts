import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { classifyStoreError } from './errors.js';
import { Mutex } from './mutex.js';
import type { Db, Row, Sql } from './port.js';

export interface SqliteOptions {
  /** File path, or `:memory:`. */
  path: string;
  /** `full` makes every commit durable on power loss; `normal` only on process crash. */
  synchronous?: 'full' | 'normal';
  busyTimeoutMs?: number;
}

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
    return this.mutex.run(async () => this.runNow<T>(q));
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.mutex.run(async () => {
      // IMMEDIATE takes the write lock up front, so two processes never both read-then-write and deadlock.
      this.runNow({ text: 'BEGIN IMMEDIATE' });
      const bound = new SqliteTx(this);
      try {
        const out = await fn(bound);
        this.runNow({ text: 'COMMIT' });
        return out;
      } catch (err) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw classifyStoreError(err);
      } finally {
        bound.closed = true;
      }
    });
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

  constructor(private readonly db: SqliteDb) {}

  async query<T = Row>(q: Sql): Promise<T[]> {
    if (this.closed)
      throw new Error('transaction already finished: use the port the caller holds, not one kept from a tx');
    return this.db.runNow<T>(q);
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this);
  }

  async close(): Promise<void> {}
}
