import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite for `sql` tools, off the event loop: better-sqlite3 is synchronous and has no interrupt, so
 * a slow query on the gateway's thread would stall every request and could not be timed out. Each
 * query runs in a worker thread holding its own connection (`readonly` for read tools: SQLite itself
 * refuses writes); at the deadline the worker is terminated — the only way to stop a running
 * statement — and a fresh one is started for the next call.
 */

const require = createRequire(import.meta.url);

/** Plain JavaScript, evaluated in the worker: it needs no build step and loads the driver by path. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: workerData.readonly, fileMustExist: true });
db.pragma('busy_timeout = 2000');
const statements = new Map();
parentPort.on('message', (m) => {
  try {
    let stmt = statements.get(m.sql);
    if (!stmt) { stmt = db.prepare(m.sql); statements.set(m.sql, stmt); }
    if (stmt.reader) {
      const rows = [];
      for (const row of stmt.iterate(m.values)) {
        rows.push(row);
        if (rows.length > m.maxRows) break;
      }
      parentPort.postMessage({ rows });
    } else {
      const info = stmt.run(m.values);
      parentPort.postMessage({ changes: info.changes, last_insert_rowid: Number(info.lastInsertRowid) });
    }
  } catch (e) {
    parentPort.postMessage({ error: { code: String(e.code || e.name || 'error'), message: String(e.message) } });
  }
});
`;

export type SqliteAnswer =
  | { rows: Record<string, unknown>[] }
  | { changes: number; last_insert_rowid: number }
  | { error: { code: string; message: string } };

interface Slot {
  worker: Worker;
  busy: boolean;
}

export class SqlitePool {
  private readonly idle: Slot[] = [];
  private size = 0;
  private readonly waiters: ((s: Slot) => void)[] = [];
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly readonly: boolean,
    private readonly max: number,
  ) {}

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver: require.resolve('better-sqlite3'), path: this.path, readonly: this.readonly },
    });
    worker.unref();
    this.size++;
    return { worker, busy: false };
  }

  private async acquire(signal: AbortSignal): Promise<Slot> {
    const free = this.idle.pop();
    if (free) return free;
    if (this.size < this.max) return this.spawn();
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(take);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      const take = (s: Slot) => {
        signal.removeEventListener('abort', onAbort);
        resolve(s);
      };
      this.waiters.push(take);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(slot: Slot): void {
    const next = this.waiters.shift();
    if (next) next(slot);
    else if (this.closed) void slot.worker.terminate();
    else this.idle.push(slot);
  }

  /** Runs one statement; rejects with the signal's reason at abort (the worker is terminated). */
  async run(
    sql: string,
    values: Record<string, unknown>,
    maxRows: number,
    signal: AbortSignal,
  ): Promise<SqliteAnswer> {
    const slot = await this.acquire(signal);
    return new Promise<SqliteAnswer>((resolve, reject) => {
      const w = slot.worker;
      const done = () => {
        w.off('message', onMessage);
        w.off('error', onError);
        signal.removeEventListener('abort', onAbort);
      };
      const onMessage = (m: SqliteAnswer) => {
        done();
        this.release(slot);
        resolve(m);
      };
      const onError = (err: Error) => {
        // The worker died (the file vanished, the driver failed to load): it is not reused.
        done();
        this.size--;
        this.replace();
        resolve({ error: { code: 'SQLITE_WORKER', message: err.message } });
      };
      const onAbort = () => {
        done();
        this.size--;
        void w.terminate();
        this.replace();
        reject(signal.reason);
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      w.on('message', onMessage);
      w.on('error', onError);
      signal.addEventListener('abort', onAbort, { once: true });
      w.postMessage({ sql, values, maxRows });
    });
  }

  /** A waiter left without a slot by a terminated worker gets a new one. */
  private replace(): void {
    if (this.closed) return;
    const next = this.waiters.shift();
    if (next) next(this.spawn());
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = this.idle.splice(0);
    this.size -= all.length;
    await Promise.all(all.map((s) => s.worker.terminate()));
  }
}
