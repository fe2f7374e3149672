/**
 * The one-method DB port (after pg-boss's `executeSql`). Every module writes its SQL as pure functions
 * returning `Sql`, with `$1…$n` placeholders in both dialects, and runs it through `query`. `tx` hands
 * the callback a port bound to one transaction, so a module's write (an outbox row, a delivery) joins
 * the caller's transaction just by using the port it was given.
 */
export interface Sql {
  text: string;
  values?: readonly unknown[];
  /** Several statements, no parameters (migrations). */
  script?: boolean;
  /**
   * PostgreSQL: a name under which the statement is prepared once per connection, so a hot statement
   * with a constant text skips parsing and planning on every run. Only for texts that never vary.
   */
  prepare?: string;
}

export type Row = Record<string, unknown>;
export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly dialect: Dialect;
  /** Runs one statement; returns its rows (empty for a statement without RETURNING). */
  query<T = Row>(sql: Sql): Promise<T[]>;
  /** Runs `fn` in one transaction; nested calls join the outer one. Rolls back when `fn` throws. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /** Whether this port is bound to an open transaction. */
  readonly inTransaction: boolean;
  /**
   * Runs `fn` once what was written through this port is visible to everyone: on a transaction's port,
   * after the outermost COMMIT (never, if it rolls back); on a plain port, on the next turn. Wakes a
   * worker (the relay, the delivery engine) without the race of waking it before the commit.
   */
  afterCommit(fn: () => void): void;
  /**
   * Transaction ports only: runs `fn` once the transaction's callback has returned, inside the
   * transaction and before its COMMIT (or SAVEPOINT release); a hook that throws rolls it back. The log
   * writes a transaction's events here, so the chain head is read, written and (on PostgreSQL) locked
   * once per transaction, for the shortest time.
   */
  beforeCommit?(fn: () => Promise<void>): void;
  /** What the store has done since it was opened, for `/metrics` and the bench (plain ports only). */
  stats?(): DbStats;
  close(): Promise<void>;
}

export interface DbStats {
  /** Durable commits. On SQLite one commit carries every transaction that queued for it. */
  commits: number;
  /** Transactions committed; a lone write outside `tx` counts as one. */
  transactions: number;
  /** Statements run through the port, reads included; the BEGIN, SAVEPOINT and COMMIT around them are not. */
  statements: number;
}

/** Statements that never write: they skip the write path (and, on SQLite, the writer thread). */
const READ_ONLY = /^\s*(SELECT|PRAGMA\s+\w+\s*$|EXPLAIN)\b/i;

/** Whether a statement may write, so it needs a transaction (and, outside one, commits on its own). */
export function writes(q: Sql): boolean {
  return q.script === true || !READ_ONLY.test(q.text);
}

export function sql(text: string, ...values: unknown[]): Sql {
  return { text, values };
}

/** The first row, or undefined. */
export async function one<T = Row>(db: Db, q: Sql): Promise<T | undefined> {
  const rows = await db.query<T>(q);
  return rows[0];
}

/** Runs a transaction's before-commit hooks in order, including any a hook adds while it runs. */
export async function runBeforeCommit(hooks: (() => Promise<void>)[]): Promise<void> {
  while (hooks.length > 0) await hooks.shift()!();
}

/** After-commit hooks wake workers; one that throws must not keep the others (or the caller) waiting. */
export function runHooks(hooks: readonly (() => void)[]): void {
  for (const fn of hooks) {
    try {
      fn();
    } catch {
      // A waker has nothing to report to the writer; the worker's own poll still runs.
    }
  }
}
