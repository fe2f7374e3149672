import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The WAL checkpoint, off the event loop. SQLite runs its checkpoint inside the COMMIT that crosses
 * `wal_autocheckpoint` (1,000 pages): it copies the WAL's pages into the database file and syncs both
 * files, on whichever thread committed. With the writer inline that is the event loop, where under a
 * webhook flood the checkpoints took ~8 % of the loop's CPU time and a commit that crossed one waited
 * for two fsyncs (docs/ARCHITECTURE.md, "Where the time goes").
 *
 * So once the WAL has grown to half of what one autocheckpoint would let it (`startAfterBytes`), a worker
 * thread with a connection of its own starts, the writer's autocheckpoint is turned off, and after a
 * commit the thread is asked for a PASSIVE checkpoint when none is running and `intervalMs` has passed
 * since the last one. PASSIVE never takes a lock the writer or the readers wait on; SQLite's own rules
 * decide what it may copy (frames no reader still needs) and when the writer may restart the WAL (once
 * every frame is in the database file and that file is synced), so which connection checkpoints
 * changes nothing durable. The thread costs ~11 MB of RSS, which is why it starts only under load: an
 * idle gateway never writes 2 MB and never has it. If the thread fails, the writer's autocheckpoint is
 * turned back on and SQLite checkpoints inline as before.
 */

export interface CheckpointerOptions {
  /** WAL size that starts the thread; SQLite's own autocheckpoint would run at about the same size. */
  startAfterBytes?: number;
  /** Least time between two checkpoints the thread is asked for. */
  intervalMs?: number;
  /** WAL frames past which the next checkpoint is fenced (below). */
  fenceFrames?: number;
}

/** What `PRAGMA wal_checkpoint(PASSIVE)` answered, as the thread reports it. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * Half of what `wal_autocheckpoint`'s default lets the WAL hold. SQLite's own checkpoint rewinds the
 * WAL once it crosses 1,000 frames of 4,120 bytes (~4.12 MB) and the file keeps that size, so a start
 * at 4 MiB was almost never reached under steady load: the checkpoints stayed inside COMMIT on the
 * event loop. At 2 MiB the thread starts before SQLite's first. The hook route at 500/s,
 * synchronous=normal, six alternated pairs (2026-12-04): p99 3.9–5.3 ms against 6.0–10.0.
 */
const START_AFTER_BYTES = 2 * 1024 * 1024;
const INTERVAL_MS = 100;
/** 4,000 frames of 4 KiB: the WAL is held to ~16 MB. */
const FENCE_FRAMES = 4000;
/** The WAL's size is read once per this many commits until the thread starts (a stat costs ~3 µs). */
const STAT_EVERY = 16;
/** SQLite's default, restored on the writer if the thread fails. */
const AUTOCHECKPOINT_PAGES = 1000;

const DRIVER_PATH = createRequire(import.meta.url).resolve('better-sqlite3');

/** Evaluated in the worker from its source text: no imports, only its globals. */
function checkpointThread(): void {
  const { parentPort, workerData } = require('node:worker_threads');
  const Database = require(workerData.driverPath);
  const db = new Database(workerData.path);
  // NORMAL: the WAL is synced before its pages are copied, the database file after, as SQLite's own
  // checkpoint does at FULL and NORMAL alike.
  db.pragma('synchronous = NORMAL');
  parentPort.on('message', (m: string) => {
    if (m === 'close') {
      db.close();
      parentPort.close();
      return;
    }
    try {
      const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
      parentPort.postMessage({ ok: true, result: r });
    } catch {
      parentPort.postMessage({ ok: false });
    }
  });
}

export class Checkpointer {
  private worker: Worker | undefined;
  private commits = 0;
  private running = false;
  private lastAt = 0;
  private failed = false;
  private closed = false;
  private readonly startAfterBytes: number;
  private readonly intervalMs: number;
  private readonly fenceFrames: number;
  /** The last checkpoint found the WAL past `fenceFrames`: the next one runs fenced. */
  private fenceDue = false;
  private replied: (() => void)[] = [];
  /** Checkpoints the thread has run, and the last one's answer (tests, diagnosis). */
  count = 0;
  last: CheckpointResult | undefined;

  constructor(
    private readonly path: string,
    /** Sets a pragma on the write connection (`wal_autocheckpoint`). */
    private readonly writerPragma: (source: string) => void,
    opts: CheckpointerOptions = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.startAfterBytes = opts.startAfterBytes ?? START_AFTER_BYTES;
    this.intervalMs = opts.intervalMs ?? INTERVAL_MS;
    this.fenceFrames = opts.fenceFrames ?? FENCE_FRAMES;
  }

  /** Whether the thread is running (it starts under load only). */
  get started(): boolean {
    return this.worker !== undefined;
  }

  /** The thread, for the test that kills it. */
  get thread(): Worker | undefined {
    return this.worker;
  }

  /** Called after every durable commit of the write connection. */
  committed(): void {
    if (this.failed || this.closed) return;
    if (!this.worker) {
      if (++this.commits % STAT_EVERY === 0 && this.walBytes() >= this.startAfterBytes) this.start();
      return;
    }
    if (this.running || this.now() - this.lastAt < this.intervalMs) return;
    this.ask(this.worker);
  }

  /**
   * Whether the store should hold its next write transaction for a fenced checkpoint. A checkpoint
   * copies only the frames written before it began, and SQLite restarts the WAL from its start only
   * when a writer finds every frame copied; under steady writes the writer has always added frames by
   * the time a concurrent checkpoint ends, so the WAL would grow for as long as the load lasts. So once
   * it passes `fenceFrames`, the store lets its transactions in flight finish, starts no new one, and
   * runs one checkpoint (only the frames since the last: about a millisecond and two fsyncs, in the
   * thread); the next commit then rewinds the WAL. HTTP goes on being served meanwhile.
   */
  get wantsFence(): boolean {
    return this.fenceDue && this.worker !== undefined;
  }

  /** The fenced checkpoint: resolves once it has run (or the thread is gone). */
  async fence(): Promise<void> {
    while (this.running && this.worker) await new Promise<void>((r) => this.replied.push(r));
    const worker = this.worker;
    if (!worker) return;
    const done = new Promise<void>((r) => this.replied.push(r));
    this.ask(worker);
    await done;
    // Its own answer still counts the frames that the next commit rewinds: not a reason for another.
    this.fenceDue = false;
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  /** The thread is ref'd while it owes an answer: a fence holds transactions, which must not be dropped. */
  private ask(worker: Worker): void {
    this.running = true;
    worker.ref();
    worker.postMessage('checkpoint');
  }

  private walBytes(): number {
    try {
      return statSync(`${this.path}-wal`).size;
    } catch {
      return 0;
    }
  }

  private start(): void {
    const worker = new Worker(`'use strict';\n(${checkpointThread.toString()})();`, {
      eval: true,
      workerData: { path: this.path, driverPath: DRIVER_PATH },
    });
    worker.unref();
    worker.on('message', (m: { ok: boolean; result?: CheckpointResult }) => {
      this.running = false;
      // Closing keeps it ref'd until it has exited.
      if (!this.closed) worker.unref();
      this.lastAt = this.now();
      if (m.ok && m.result) {
        this.count++;
        this.last = m.result;
        if (m.result.log >= this.fenceFrames) this.fenceDue = true;
      }
      for (const r of this.replied.splice(0)) r();
      // A failed checkpoint (SQLITE_BUSY, an I/O error) leaves the WAL as it was; the next commit asks
      // again, and an I/O error the writer's own commits meet takes the store down as before.
    });
    worker.on('error', () => this.fallBack());
    worker.on('exit', () => {
      if (!this.closed) this.fallBack();
    });
    this.worker = worker;
    this.writerPragma('wal_autocheckpoint = 0');
  }

  /** The thread is gone: SQLite checkpoints inline again. */
  private fallBack(): void {
    if (this.failed) return;
    this.failed = true;
    this.worker = undefined;
    this.running = false;
    this.fenceDue = false;
    for (const r of this.replied.splice(0)) r();
    try {
      this.writerPragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The store is closing or its writer failed; nothing is left to checkpoint.
    }
  }
}
