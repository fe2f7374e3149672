import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { AppError } from '../errors/index.js';

/** `fs.fdatasync`'s shape; a test passes one it controls. */
export type SyncFile = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

/** Syncs under way at once (`WalSync.maxRunning`). */
const MAX_RUNNING = 4;

interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function waiters(): Waiters {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A read that never came to wait must not turn a failed sync into an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * `synchronous=full` without an fsync on the event loop. The write connection commits with
 * `synchronous=NORMAL`, so COMMIT writes the transaction's WAL frames and returns without syncing;
 * then `durable()` runs `fdatasync` on the WAL file in libuv's thread pool while the event loop goes on
 * (serving HTTP, running the next group's statements). A transaction is answered, and its after-commit
 * hooks wake workers, only once the sync that began after its COMMIT has returned: the same frames on
 * disk, in the same order, as SQLite's own fsync at COMMIT under FULL. A commit's sync starts at once
 * while fewer than `maxRunning` run; past that, commits wait and share the next one.
 *
 * Until then the commit is visible on this process's connections but not durable, so reads outside a
 * transaction wait for `pending` first: nobody is shown a row that a power cut could take back. A
 * transaction that reads it is answered later still, after its own sync, which covers every earlier
 * commit. A failed sync leaves unknown what is on disk (the kernel may have dropped the pages), so it
 * fails every waiting and later transaction with `store_unavailable` and calls `onFatal`, which takes
 * the process down; start-up recovers from what the WAL holds, as after a crash.
 */
export class WalSync {
  private fd: number | undefined;
  /** Syncs under way, oldest first; each resolves its own waiters and every older batch's. */
  private readonly running: Waiters[] = [];
  private next: Waiters | undefined;
  private latest: Promise<void> | undefined;
  private failed: AppError | undefined;

  constructor(
    /** The database file; its WAL is `<path>-wal`. */
    private readonly path: string,
    private readonly onFatal: (err: AppError) => void,
    private readonly syncFile: SyncFile = fdatasync,
    /**
     * Syncs allowed under way at once. A commit's own sync starts at once instead of after the one
     * running: fdatasync makes durable everything written before it was called, whatever other syncs
     * of the file are doing, so the later one finishing answers every earlier commit too.
     */
    private readonly maxRunning = MAX_RUNNING,
  ) {}

  /** Called right after a COMMIT returned: resolves once that commit is on disk. */
  durable(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    this.next ??= waiters();
    this.latest = this.next.promise;
    this.start();
    return this.latest;
  }

  /** The durability of the last commit while its sync is under way; what a read waits for. */
  get pending(): Promise<void> | undefined {
    return this.latest;
  }

  /** Waits for the syncs under way, then closes the WAL's descriptor. */
  async close(): Promise<void> {
    await this.latest?.catch(() => {});
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private start(): void {
    if (this.running.length >= this.maxRunning || !this.next) return;
    const batch = this.next;
    this.next = undefined;
    let fd: number;
    try {
      fd = this.open();
    } catch (err) {
      this.fail(batch, err);
      return;
    }
    this.running.push(batch);
    this.syncFile(fd, (err) => {
      if (err) {
        this.fail(batch, err);
        return;
      }
      // This sync covers every commit made before it began: its batch and every older one.
      const at = this.running.indexOf(batch);
      if (at < 0) return;
      for (const done of this.running.splice(0, at + 1)) done.resolve();
      if (this.latest === batch.promise) this.latest = undefined;
      this.start();
    });
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    // The WAL exists once the write connection has committed; it keeps that inode while a
    // connection is open (a checkpoint rewinds it in place). fdatasync on a read-only descriptor
    // flushes the file's data whoever wrote it. Its directory entry is synced once, as SQLite does
    // for a new journal, so the file itself survives a power cut.
    const fd = openSync(`${this.path}-wal`, 'r');
    const dir = openSync(dirname(this.path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.fd = fd;
    return fd;
  }

  private fail(batch: Waiters, err: unknown): void {
    const first = this.failed === undefined;
    this.failed ??= new AppError('store_unavailable', undefined, undefined, { cause: err });
    batch.reject(this.failed);
    for (const other of this.running.splice(0)) other.reject(this.failed);
    this.next?.reject(this.failed);
    this.next = undefined;
    if (first) this.onFatal(this.failed);
  }
}
