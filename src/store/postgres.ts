import { createRequire } from 'node:module';
import type pg from 'pg';
import { classifyStoreError } from './errors.js';
import { type Db, type DbStats, type Row, runBeforeCommit, runHooks, type Sql, writes } from './port.js';

let driver: typeof pg | undefined;
/**
 * The `pg` driver, loaded on first use: a gateway on the embedded SQLite never pays its ~15 MB of
 * resident memory. `pg` is CommonJS, so a synchronous require keeps the constructors synchronous.
 */
export function pgDriver(): typeof pg {
  if (!driver) {
    driver = createRequire(import.meta.url)('pg') as typeof pg;
    // BIGINT (int8) columns hold epoch milliseconds and counters, all far below 2^53: read them as numbers.
    driver.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
  }
  return driver;
}

export interface PostgresOptions {
  url: string;
  /** Schema to use (created if missing); tests give each suite its own. */
  schema?: string;
  max?: number;
  connectionTimeoutMs?: number;
}

/**
 * PostgreSQL behind the port: a pool; `tx` checks out one client for the transaction. Workers on
 * several processes claim rows with `FOR UPDATE SKIP LOCKED` in their own SQL.
 */
export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  readonly inTransaction = false;
  readonly pool: pg.Pool;
  readonly schema: string | undefined;
  private readonly counts: DbStats = { commits: 0, transactions: 0, statements: 0 };

  constructor(opts: PostgresOptions) {
    this.schema = opts.schema;
    this.pool = new (pgDriver().Pool)({
      connectionString: opts.url,
      max: opts.max ?? 10,
      connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5000,
      ...(opts.schema ? { options: `-c search_path=${quoteIdent(opts.schema)}` } : {}),
    });
    // An idle client that loses its server must not crash the process; the next query reports it.
    this.pool.on('error', () => {});
  }

  /** Connects once and creates the schema; throws store_unavailable with the driver's reason. */
  async open(): Promise<this> {
    try {
      if (this.schema) {
        const admin = new (pgDriver().Client)({ connectionString: this.pool.options.connectionString });
        await admin.connect();
        try {
          await admin.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
        } finally {
          await admin.end();
        }
      }
      await this.pool.query('SELECT 1');
    } catch (err) {
      throw classifyStoreError(err);
    }
    return this;
  }

  /** Commits, committed transactions and statements since the pool was opened. */
  stats(): DbStats {
    return { ...this.counts };
  }

  async query<T = Row>(q: Sql): Promise<T[]> {
    this.counts.statements++;
    try {
      const res = await this.pool.query(pgQuery(q));
      // A write outside a transaction is one on its own, with its own commit.
      if (writes(q)) {
        this.counts.commits++;
        this.counts.transactions++;
      }
      return res.rows as T[];
    } catch (err) {
      throw classifyStoreError(err);
    }
  }

  async tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw classifyStoreError(err);
    }
    const bound = new PostgresTx(client, this.counts);
    let broken = false;
    try {
      await client.query('BEGIN');
      const out = await fn(bound);
      await runBeforeCommit(bound.before);
      await client.query('COMMIT');
      this.counts.commits++;
      this.counts.transactions++;
      runHooks(bound.hooks);
      return out;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw classifyStoreError(err);
    } finally {
      bound.closed = true;
      client.release(broken);
    }
  }

  afterCommit(fn: () => void): void {
    setImmediate(() => runHooks([fn]));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

class PostgresTx implements Db {
  readonly dialect = 'postgres' as const;
  readonly inTransaction = true;
  closed = false;
  readonly hooks: (() => void)[] = [];
  readonly before: (() => Promise<void>)[] = [];

  constructor(
    private readonly client: pg.PoolClient,
    private readonly counts: DbStats,
  ) {}

  async query<T = Row>(q: Sql): Promise<T[]> {
    if (this.closed)
      throw new Error('transaction already finished: use the port the caller holds, not one kept from a tx');
    this.counts.statements++;
    const res = await this.client.query(pgQuery(q));
    return res.rows as T[];
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this);
  }

  afterCommit(fn: () => void): void {
    this.hooks.push(fn);
  }

  beforeCommit(fn: () => Promise<void>): void {
    this.before.push(fn);
  }

  async close(): Promise<void> {}
}

/** The driver's query config: named (prepared once per connection) when the statement asks for it. */
function pgQuery(q: Sql): pg.QueryConfig {
  const values = q.values as unknown[] | undefined;
  return q.prepare ? { name: q.prepare, text: q.text, values } : { text: q.text, values };
}

export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid identifier: ${name}`);
  return `"${name}"`;
}
