import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { AppError } from '../errors/index.js';
import { Checkpointer, type CheckpointerOptions } from './checkpointer.js';
import { classifyStoreError } from './errors.js';
import { type Db, type DbStats, type Row, runBeforeCommit, runHooks, type Sql, writes } from './port.js';
import { InlineLink, ThreadLink, type WriterLink } from './sqlite-link.js';
import { type Control, REPLY, type WriterError, type WriterOp, type WriterReply } from './sqlite-writer.js';
import { type SyncFile, WalSync } from './wal-sync.js';
import { type Positional, positional } from './sqlite-params.js';

export interface SqliteOptions {
  /** File path, or `:memory:`. */
  path: string;
  /** `full` makes every commit durable on power loss; `normal` only on process crash. */
  synchronous?: 'full' | 'normal';
  busyTimeoutMs?: number;
  /**
   * Where the write connection lives: on the event loop (`inline`), or in a worker thread (`thread`:
   * commits never block the event loop, but every statement of a transaction crosses to it and back).
   * Defaults to DEFAULT_WRITER; `:memory:` is always inline.
   */
  writer?: 'thread' | 'inline';
  /**
   * How a transaction's statements wait for the writer thread: `async` (the default) awaits a message,
   * so this thread serves HTTP while the statement runs; `sync` blocks for it (Atomics.wait), so a
   * group's transactions run back to back but this thread pays every hand-off. Commits are awaited by
   * message either way. The bench measures both (bench/core.ts, bench/ingress.ts).
   */
  transport?: 'sync' | 'async';
  /**
   * Called once if the writer thread dies. By default the error is thrown, so the process exits: a
   * store without its writer cannot make progress, and a restart recovers from the WAL.
   */
  onFatal?: (err: AppError) => void;
  /**
   * How the inline writer makes a `full` commit durable (`wal-sync.ts`): `fdatasync` of the WAL in
   * libuv's thread pool. Tests pass one they control.
   */
  syncFile?: SyncFile;
  /**
   * The inline writer's checkpoints run in a thread once the WAL first grows past 2 MB
   * (`checkpointer.ts`); `false` leaves them to SQLite, inside the COMMIT that crosses 1,000 pages.
   */
  checkpoints?: CheckpointerOptions | false;
}

/** What the benchmarks and tests reach below the port: the write connection itself. */
export interface WriterDriver {
  pragma(source: string, opts?: { simple?: boolean }): unknown;
  exec(sql: string): void;
}

/**
 * Measured on the 2-core VM, same run (bench/ingress.ts, FULL): 2,389 webhooks/s with the connection on
 * the event loop, 1,255/s with the writer thread. Group commit leaves a webhook 0.13 commits, so the
 * fsync the thread takes off the event loop costs less than its ~15 statement hand-offs per webhook
 * (~20 µs each between vCPUs). Slow disks (commits over ~2 ms) or fewer statements per request would
 * tip it the other way; the bench prints both.
 */
export const DEFAULT_WRITER: 'inline' | 'thread' = 'inline';

/** How many waiting transactions one commit may carry; bounds the latency one batch adds. */
const MAX_GROUP = 256;

const throwLater = (err: AppError) => {
  setImmediate(() => {
    throw err;
  });
};

type Statement = Database.Statement<unknown[] | Record<string, unknown>, unknown>;

interface Pending {
  fn: (db: Db) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** One BEGIN … COMMIT shared by the transactions that queued for it. */
interface Group {
  /** Control statements not sent yet: they ride ahead of the next statement (or the COMMIT). */
  pre: Control[];
  begun: boolean;
  /** SQLite rolled the whole transaction back (or a control failed): every member fails with it. */
  failure: unknown;
}

/** A value as SQLite takes it: no undefined or boolean, and a Buffer that crosses to a thread on its own. */
function sqliteValue(v: unknown): unknown {
  return v === undefined
    ? null
    : typeof v === 'boolean'
      ? v
        ? 1
        : 0
      : // A small Buffer is a view of an 8 KB pool, and a message would carry the whole pool.
        v instanceof Uint8Array && v.byteLength !== v.buffer.byteLength
        ? new Uint8Array(v)
        : v;
}

/**
 * The values for a statement as `prepared` holds it: in `?` order (sqlite-params.ts), or, for a text
 * that kept its `$n` names, as an object (SQLite reads `$1` as a parameter named "1").
 */
function bindable(
  values: readonly unknown[] | undefined,
  order: readonly number[] | undefined,
): Row | unknown[] {
  const given = values ?? [];
  if (order) {
    const out = new Array<unknown>(order.length);
    for (let i = 0; i < order.length; i++) {
      const at = order[i] as number;
      // Too few values: the driver refuses the short list ("Too few parameter values"), as it refuses
      // a named parameter with no value, rather than binding NULL.
      if (at >= given.length) return out.slice(0, i);
      out[i] = sqliteValue(given[at]);
    }
    return out;
  }
  const out: Row = {};
  for (let i = 0; i < given.length; i++) out[String(i + 1)] = sqliteValue(given[i]);
  return out;
}

/** A text as the connection prepares it, and how its values bind (no `order`: by name). */
type Prepared = Partial<Positional> & { text: string };

const prepared = (text: string): Prepared => positional(text) ?? { text };

/** An error from the writer, as the driver would have thrown it here. */
function rebuild(e: WriterError): Error {
  if (e.name === 'SqliteError') return new Database.SqliteError(e.message, e.code ?? 'SQLITE_ERROR');
  return Object.assign(new Error(e.message), e.code ? { code: e.code } : {});
}

/** BLOBs cross the thread boundary as Uint8Array; callers get Buffers, as from the driver. */
function buffers<T>(rows: Row[] | undefined): T[] {
  if (!rows) return [];
  for (const row of rows) {
    for (const k in row) {
      const v = row[k];
      if (v instanceof Uint8Array && !Buffer.isBuffer(v))
        row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    }
  }
  return rows as T[];
}

/**
 * SQLite behind the port, with two connections. Every write and every statement of a transaction runs
 * on the write connection: on the event loop, or in a worker thread (`sqlite-writer.ts`) where COMMIT
 * and its fsync run while the event loop goes on serving HTTP. On the event loop with
 * `synchronous=full`, COMMIT does not sync and the WAL's fdatasync runs in libuv's pool before anyone
 * is answered (`wal-sync.ts`), so there too no fsync blocks the event loop. Reads outside a transaction run on a
 * query_only connection on the event loop and wait for no write (WAL: they see every committed
 * transaction; `tx` resolves only after its COMMIT, so a read after `await db.tx(…)` sees it).
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  readonly inTransaction = false;
  private readonly reader: Database.Database | undefined;
  private readonly readStatements = new Map<string, { stmt: Statement; order?: readonly number[] }>();
  private readonly link: WriterLink;
  private readonly transport: 'sync' | 'async';
  /** Each text sent to the writer: its statement id there, and how its values bind. */
  private readonly sids = new Map<string, Prepared & { sid: number }>();
  private nextId = 1;
  private readonly queue: Pending[] = [];
  private kicked = false;
  /** A group is running its transactions (with `async`, until its COMMIT is sent; else until done). */
  private busy = false;
  /** Groups started and not yet answered. */
  private inflight = 0;
  private idle: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  private readonly counts: DbStats = { commits: 0, transactions: 0, statements: 0 };
  /** `full` with the writer inline: commits with NORMAL, then the WAL's fdatasync off the event loop. */
  private readonly walSync: WalSync | undefined;
  /** The inline writer's checkpoints, off the event loop once the WAL has grown (`checkpointer.ts`). */
  readonly checkpoints: Checkpointer | undefined;

  constructor(opts: SqliteOptions) {
    const memory = opts.path === ':memory:';
    if (!memory) mkdirSync(dirname(opts.path), { recursive: true });
    const writer: { path: string; synchronous: 'full' | 'normal'; busyTimeoutMs: number } = {
      path: opts.path,
      synchronous: opts.synchronous ?? 'full',
      busyTimeoutMs: opts.busyTimeoutMs ?? 5000,
    };
    this.transport = opts.transport ?? 'async';
    const inline = memory || (opts.writer ?? DEFAULT_WRITER) === 'inline';
    if (inline && !memory && writer.synchronous === 'full') {
      this.walSync = new WalSync(opts.path, opts.onFatal ?? throwLater, opts.syncFile);
      writer.synchronous = 'normal';
    }
    try {
      if (!memory) {
        // Opened first and here, so a bad path fails the constructor as it always did.
        const r = new Database(opts.path);
        r.pragma(`busy_timeout = ${writer.busyTimeoutMs}`);
        r.pragma('journal_mode = WAL');
        r.pragma('query_only = ON');
        this.reader = r;
      }
      this.link = inline ? new InlineLink(writer) : new ThreadLink(writer, opts.onFatal ?? throwLater);
      if (inline && !memory && opts.checkpoints !== false)
        this.checkpoints = new Checkpointer(
          opts.path,
          (source) => this.direct({ text: `PRAGMA ${source}` }),
          opts.checkpoints,
        );
    } catch (err) {
      this.reader?.close();
      throw classifyStoreError(err);
    }
  }

  /** The write connection, for the few places that need it (benchmarks, the disk-full test). */
  get driver(): WriterDriver {
    return {
      pragma: (source, o) => {
        const rows = this.direct({ text: `PRAGMA ${source}` });
        return o?.simple ? Object.values(rows[0] ?? {})[0] : rows;
      },
      exec: (text) => {
        this.direct({ text, script: true });
      },
    };
  }

  /** The writer thread (none when the writer is inline), for the tests that kill it. */
  get thread(): Worker | undefined {
    return this.link instanceof ThreadLink ? this.link.worker : undefined;
  }

  /** Commits, committed transactions and statements since the store was opened. */
  stats(): DbStats {
    return { ...this.counts };
  }

  async query<T = Row>(q: Sql): Promise<T[]> {
    // A lone write commits like a transaction, so it joins the next group commit instead of paying an
    // fsync of its own; reads run at once on the read connection.
    const read = this.reader && !writes(q) ? this.readStatement(q.text) : undefined;
    if (!read?.stmt.reader) return this.tx((t) => t.query<T>(q));
    this.counts.statements++;
    try {
      // A commit whose WAL sync is under way is not shown until it is durable (wal-sync.ts).
      const pending = this.walSync?.pending;
      if (pending) await pending;
      const values = bindable(q.values, read.order);
      // As the writer runs it: an array spreads into positional values, an object is one named set.
      return (read.stmt as Database.Statement<unknown[]>).all(
        ...(Array.isArray(values) ? values : [values]),
      ) as T[];
    } catch (err) {
      throw classifyStoreError(err);
    }
  }

  private readStatement(text: string): { stmt: Statement; order?: readonly number[] } {
    let read = this.readStatements.get(text);
    if (!read) {
      const p = prepared(text);
      try {
        read = { stmt: this.reader!.prepare(p.text) as Statement, ...(p.order ? { order: p.order } : {}) };
      } catch (err) {
        throw classifyStoreError(err);
      }
      this.readStatements.set(text, read);
    }
    return read;
  }

  /**
   * Group commit: transactions that arrive while another group runs or commits wait together and share
   * the next BEGIN … COMMIT, each inside its own SAVEPOINT. One that throws rolls back to its savepoint
   * alone; none is answered before the COMMIT that makes it durable. With `synchronous=FULL` a commit
   * costs an fsync, so N concurrent writers pay one fsync instead of N (see bench/core.ts).
   */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (this.closing)
      return Promise.reject(classifyStoreError(new Error('The database connection is not open')));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn: fn as Pending['fn'], resolve: resolve as Pending['resolve'], reject });
      this.kick();
    });
  }

  /**
   * The next group starts after this turn's I/O callbacks, so every request that arrived together
   * joins it, not only the first.
   */
  private kick(): void {
    if (this.busy || this.kicked || this.queue.length === 0) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      if (this.busy || this.queue.length === 0) return;
      // A fenced checkpoint (checkpointer.ts) starts once no group is in flight; none starts meanwhile.
      if (this.checkpoints?.wantsFence) {
        if (this.inflight > 0) return;
        this.busy = true;
        void this.checkpoints.fence().finally(() => {
          this.busy = false;
          this.kick();
        });
        return;
      }
      this.busy = true;
      this.inflight++;
      // Each group hands the writer back once; with async statements that is before its COMMIT returns.
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.busy = false;
        this.kick();
      };
      void this.runGroup(release).finally(() => {
        this.inflight--;
        release();
        // A fence waiting for the groups in flight (above) starts once the last is answered.
        if (this.inflight === 0 && this.checkpoints?.wantsFence) this.kick();
        if (this.inflight === 0 && this.queue.length === 0) for (const fn of this.idle.splice(0)) fn();
      });
    });
  }

  private async runGroup(release: () => void): Promise<void> {
    const group: Group = { pre: ['begin'], begun: false, failure: undefined };
    const members: { item: Pending; port: SqliteTx; ok: boolean; value?: unknown; error?: unknown }[] = [];
    // Transactions that queue while the group runs join it: they would only wait for its COMMIT.
    while (members.length < MAX_GROUP && group.failure === undefined) {
      const item = this.queue.shift();
      if (!item) break;
      const port = new SqliteTx(this, group);
      const member: (typeof members)[number] = { item, port, ok: false };
      members.push(member);
      try {
        member.value = await item.fn(port);
        await runBeforeCommit(port.before);
        member.ok = group.failure === undefined;
        if (port.savepoint) group.pre.push('release');
      } catch (err) {
        member.error = classifyStoreError(err);
        if (port.savepoint) group.pre.push('rollback-to');
      } finally {
        port.closed = true;
      }
    }
    let failure = group.failure;
    if (group.begun) {
      if (failure === undefined && members.some((m) => m.ok)) {
        const commit = this.safeAsync(this.control([...group.pre, 'commit']));
        // Inline, the COMMIT has run by now: from here reads wait for the sync that makes it durable.
        const durable = this.walSync?.durable().then(
          () => undefined,
          (err: unknown) => err,
        );
        // With async statements the next group may queue its BEGIN behind this COMMIT right away
        // (inline with a WAL sync: while this group's sync runs).
        if (this.transport === 'async') release();
        const reply = await commit;
        if ('failed' in reply) failure = reply.failed;
        else if (reply.error) failure = classifyStoreError(rebuild(reply.error));
        else {
          const err = await durable;
          if (err) failure = err;
          else {
            this.counts.commits++;
            this.checkpoints?.committed();
          }
        }
      } else {
        try {
          this.link.post(this.control([...group.pre, 'rollback']));
        } catch {
          // The writer is gone, and its transaction with it.
        }
      }
    }
    for (const m of members) {
      if (m.ok && failure === undefined) {
        this.counts.transactions++;
        runHooks(m.port.hooks);
        m.item.resolve(m.value);
      } else {
        m.item.reject(m.error ?? failure);
      }
    }
  }

  private async safeAsync(op: WriterOp): Promise<WriterReply | { failed: unknown }> {
    try {
      return await this.link.async(op);
    } catch (err) {
      return { failed: err };
    }
  }

  private control(pre: Control[]): WriterOp {
    return { id: this.nextId++, pre, reply: REPLY.async };
  }

  private op(q: Sql, pre: Control[], inTx: boolean): WriterOp {
    const op: WriterOp = { id: this.nextId++, reply: this.transport === 'sync' ? REPLY.sync : REPLY.async };
    if (pre.length > 0) op.pre = pre;
    if (inTx) op.inTx = true;
    if (q.script) {
      op.script = q.text;
      return op;
    }
    let sent = this.sids.get(q.text);
    if (sent === undefined) {
      sent = { ...prepared(q.text), sid: this.sids.size + 1 };
      this.sids.set(q.text, sent);
      op.text = sent.text;
    }
    op.sid = sent.sid;
    op.params = bindable(q.values, sent.order);
    return op;
  }

  /** Runs one statement of `port`'s transaction on the write connection. */
  async runInGroup<T>(port: SqliteTx, q: Sql): Promise<T[]> {
    const group = port.group;
    if (group.failure !== undefined) throw group.failure;
    if (!port.savepoint) {
      group.pre.push('savepoint');
      port.savepoint = true;
    }
    const op = this.op(q, group.pre.splice(0), true);
    group.begun = true;
    this.counts.statements++;
    let reply: WriterReply;
    try {
      reply = op.reply === REPLY.sync ? this.link.sync(op) : await this.link.async(op);
    } catch (err) {
      group.failure ??= err;
      throw err;
    }
    if (reply.error) {
      const err = classifyStoreError(rebuild(reply.error));
      if (reply.error.during === 'control' || !reply.inTx) group.failure ??= err;
      throw err;
    }
    return buffers<T>(reply.rows);
  }

  /** A statement on the write connection outside any group (the driver's callers hold no transaction). */
  private direct(q: Sql): Row[] {
    const reply = this.link.sync({ ...this.op(q, [], false), reply: REPLY.sync });
    if (reply.error) throw classifyStoreError(rebuild(reply.error));
    return buffers<Row>(reply.rows);
  }

  afterCommit(fn: () => void): void {
    setImmediate(() => runHooks([fn]));
  }

  /** Finishes every transaction already queued, then closes both connections and the writer thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.inflight > 0 || this.queue.length > 0) await new Promise<void>((r) => this.idle.push(r));
      // The thread's connection closes first, so the writer's close still checkpoints and removes the WAL.
      await this.checkpoints?.close();
      await this.link.close();
      await this.walSync?.close();
      if (this.reader?.open) this.reader.close();
    })();
    return this.closing;
  }
}

export class SqliteTx implements Db {
  readonly dialect = 'sqlite' as const;
  readonly inTransaction = true;
  closed = false;
  /** Whether this transaction's SAVEPOINT is open: taken with its first statement. */
  savepoint = false;
  readonly hooks: (() => void)[] = [];
  readonly before: (() => Promise<void>)[] = [];

  constructor(
    private readonly db: SqliteDb,
    readonly group: Group,
  ) {}

  async query<T = Row>(q: Sql): Promise<T[]> {
    if (this.closed)
      throw new Error('transaction already finished: use the port the caller holds, not one kept from a tx');
    return this.db.runInGroup<T>(this, q);
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
