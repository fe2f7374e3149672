import type BetterSqlite3 from 'better-sqlite3';
import type * as WorkerThreads from 'node:worker_threads';
import type { Row } from './port.js';

/**
 * The SQLite write connection and the thread that owns it. `createWriter` and `writerThread` are
 * evaluated inside a worker from their own source text (see `writerSource`), so neither may use
 * anything from outside its body but its parameters and globals: no imports, no module constants.
 * The same `createWriter` also runs on the calling thread (`writer: 'inline'`), so both designs execute
 * exactly the same statements.
 */

/** Transaction control the group-commit driver sends ahead of the next statement (no round trip). */
export type Control = 'begin' | 'savepoint' | 'release' | 'rollback-to' | 'commit' | 'rollback';

/** How the writer answers an op: not at all, to the blocked caller, or by message. */
export const REPLY = { none: 0, sync: 1, async: 2 } as const;
export type ReplyMode = (typeof REPLY)[keyof typeof REPLY];

export interface WriterOp {
  id: number;
  /** Run first, in order; the first that fails fails the op and the statement does not run. */
  pre?: Control[];
  /** A prepared statement: its text travels once, with the first op that names the id. */
  sid?: number;
  text?: string;
  params?: Record<string, unknown> | unknown[];
  /** Several statements, no parameters (migrations, the bench's driver). */
  script?: string;
  /**
   * The statement belongs to a group transaction: refuse it if SQLite has rolled that transaction back
   * on its own (SQLITE_FULL, an I/O error), instead of running it in autocommit.
   */
  inTx?: boolean;
  reply: ReplyMode;
  close?: boolean;
}

export interface WriterError {
  name: string;
  message: string;
  code?: string;
  during: 'control' | 'statement';
}

export interface WriterReply {
  id: number;
  rows?: Row[];
  error?: WriterError;
  /** Whether the connection is inside a transaction after the op. */
  inTx: boolean;
}

export interface WriterOptions {
  path: string;
  synchronous: 'full' | 'normal';
  busyTimeoutMs: number;
}

export interface Writer {
  handle(op: WriterOp): WriterReply;
  close(): void;
}

/** Shared-memory words: the caller bumps WAKE after posting; the writer bumps DONE after a sync reply. */
export const SLOT = { wake: 0, done: 1, dead: 2 } as const;

export function createWriter(Database: typeof BetterSqlite3, opts: WriterOptions): Writer {
  const db = new Database(opts.path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${opts.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
  // Every group transaction runs inside a SAVEPOINT, and SQLite keeps a savepoint's (and a statement's)
  // undo pages in a temporary file it creates, writes and drops again per transaction: on this VM ~40 %
  // of a reach touch's store time (bench reach, docs/reach.md "Figures"). Those pages only undo work
  // inside a live transaction; after a crash the WAL alone decides what is committed, so holding them
  // in memory changes nothing durable. The memory is bounded by the pages one transaction changes.
  db.pragma('temp_store = MEMORY');
  const texts = new Map<number, string>();
  const statements = new Map<number, BetterSqlite3.Statement<unknown[], unknown>>();

  function control(c: Control): void {
    switch (c) {
      // IMMEDIATE takes the write lock up front, so two processes never both read-then-write and deadlock.
      case 'begin':
        db.exec('BEGIN IMMEDIATE');
        return;
      case 'savepoint':
        db.exec('SAVEPOINT sb_group');
        return;
      case 'release':
        db.exec('RELEASE sb_group');
        return;
      case 'rollback-to':
        // SQLite may already have rolled the whole transaction back (SQLITE_FULL): nothing is left to undo.
        if (db.inTransaction) db.exec('ROLLBACK TO sb_group; RELEASE sb_group');
        return;
      case 'commit':
        try {
          db.exec('COMMIT');
        } catch (err) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw err;
        }
        return;
      case 'rollback':
        if (db.inTransaction) db.exec('ROLLBACK');
        return;
      default:
        throw new Error(`unknown control ${String(c)}`);
    }
  }

  function failure(err: unknown, during: WriterError['during']): WriterError {
    const e = err as { name?: unknown; message?: unknown; code?: unknown };
    const out: WriterError = { name: String(e?.name ?? 'Error'), message: String(e?.message ?? err), during };
    if (typeof e?.code === 'string') out.code = e.code;
    return out;
  }

  function statement(op: WriterOp): BetterSqlite3.Statement<unknown[], unknown> {
    const sid = op.sid as number;
    let stmt = statements.get(sid);
    if (stmt) return stmt;
    if (op.text !== undefined) texts.set(sid, op.text);
    const text = texts.get(sid);
    if (text === undefined) throw new Error(`statement ${sid} was never sent`);
    stmt = db.prepare(text);
    statements.set(sid, stmt);
    return stmt;
  }

  return {
    handle(op: WriterOp): WriterReply {
      try {
        for (const c of op.pre ?? []) control(c);
      } catch (err) {
        return { id: op.id, error: failure(err, 'control'), inTx: db.inTransaction };
      }
      if (op.sid === undefined && op.script === undefined) return { id: op.id, inTx: db.inTransaction };
      try {
        if (op.inTx && !db.inTransaction) {
          throw Object.assign(new Error('the transaction was rolled back by SQLite'), {
            code: 'SQLITE_ABORT',
          });
        }
        if (op.script !== undefined) {
          db.exec(op.script);
          return { id: op.id, rows: [], inTx: db.inTransaction };
        }
        const stmt = statement(op);
        const p = op.params ?? {};
        const args = Array.isArray(p) ? p : [p];
        if (stmt.reader) return { id: op.id, rows: stmt.all(...args) as Row[], inTx: db.inTransaction };
        stmt.run(...args);
        return { id: op.id, rows: [], inTx: db.inTransaction };
      } catch (err) {
        return { id: op.id, error: failure(err, 'statement'), inTx: db.inTransaction };
      }
    },
    close(): void {
      if (db.open) db.close();
    },
  };
}

export interface WriterThreadData {
  opts: WriterOptions;
  driverPath: string;
  words: SharedArrayBuffer;
  slot: typeof SLOT;
  reply: typeof REPLY;
  commands: WorkerThreads.MessagePort;
  syncReplies: WorkerThreads.MessagePort;
  asyncReplies: WorkerThreads.MessagePort;
}

/**
 * The worker's whole life: sleep on the WAKE word, run every queued op in order, answer, sleep again.
 * It never returns to its own event loop, so a wake costs a futex, not a libuv round. If anything
 * escapes (a bug, not a statement error: those are answers), it marks itself dead first, so a caller
 * blocked on a sync reply wakes up instead of waiting forever.
 */
export function writerThread(wt: typeof WorkerThreads, Database: typeof BetterSqlite3): void {
  const data = wt.workerData as WriterThreadData;
  const { slot, reply } = data;
  const words = new Int32Array(data.words);
  try {
    const writer = createWriter(Database, data.opts);
    for (;;) {
      const seen = Atomics.load(words, slot.wake);
      for (let m = wt.receiveMessageOnPort(data.commands); m; m = wt.receiveMessageOnPort(data.commands)) {
        const op = m.message as WriterOp;
        if (op.close) {
          writer.close();
          data.commands.close();
          data.syncReplies.close();
          data.asyncReplies.close();
          return;
        }
        const answer = writer.handle(op);
        if (op.reply === reply.sync) {
          data.syncReplies.postMessage(answer);
          Atomics.add(words, slot.done, 1);
          Atomics.notify(words, slot.done);
        } else if (op.reply === reply.async) {
          data.asyncReplies.postMessage(answer);
        }
      }
      Atomics.wait(words, slot.wake, seen);
    }
  } catch (err) {
    Atomics.store(words, slot.dead, 1);
    Atomics.add(words, slot.done, 1);
    Atomics.notify(words, slot.done);
    throw err;
  }
}

/** The worker's program: both functions above from their own text, started with the driver it names. */
export function writerSource(): string {
  return [
    "'use strict';",
    createWriter.toString(),
    `(${writerThread.toString()})(require('node:worker_threads'), require(require('node:worker_threads').workerData.driverPath));`,
  ].join('\n');
}
