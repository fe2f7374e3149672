import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { AppError } from '../errors/index.js';
import {
  createWriter,
  REPLY,
  SLOT,
  type Writer,
  type WriterOp,
  type WriterOptions,
  type WriterReply,
  type WriterThreadData,
  writerSource,
} from './sqlite-writer.js';

/** How `SqliteDb` reaches its write connection: in a worker thread, or on the calling thread. */
export interface WriterLink {
  /** Runs the op and returns its answer, blocking this thread until the writer has it. */
  sync(op: WriterOp): WriterReply;
  /** Runs the op; the answer arrives by message, and this thread goes on meanwhile. */
  async(op: WriterOp): Promise<WriterReply>;
  /** Runs the op without anyone waiting for it (it still runs before every op sent after it). */
  post(op: WriterOp): void;
  close(): Promise<void>;
}

/** The write connection on the calling thread: what `SqliteDb` was before the writer thread. */
export class InlineLink implements WriterLink {
  private readonly writer: Writer;

  constructor(opts: WriterOptions) {
    this.writer = createWriter(Database, opts);
  }

  sync(op: WriterOp): WriterReply {
    return this.writer.handle(op);
  }

  async async(op: WriterOp): Promise<WriterReply> {
    return this.writer.handle(op);
  }

  post(op: WriterOp): void {
    this.writer.handle(op);
  }

  async close(): Promise<void> {
    this.writer.close();
  }
}

const DRIVER_PATH = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * The write connection in a worker thread. Ops travel over a MessagePort (structured clone); a shared
 * word wakes the worker from its futex sleep, and a second one wakes a caller blocked in `sync`. The
 * worker is unref'd and the answer port is ref'd only while an async answer is awaited, so an idle
 * store never keeps the process alive, and a commit in flight always does.
 */
export class ThreadLink implements WriterLink {
  readonly worker: Worker;
  private readonly words = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private readonly commands: MessagePort;
  private readonly syncReplies: MessagePort;
  private readonly asyncReplies: MessagePort;
  private readonly waiting = new Map<
    number,
    { resolve: (r: WriterReply) => void; reject: (e: unknown) => void }
  >();
  private failure: AppError | undefined;
  private closing = false;
  private readonly exited: Promise<void>;

  constructor(
    opts: WriterOptions,
    private readonly onFatal: (err: AppError) => void,
  ) {
    const commands = new MessageChannel();
    const syncReplies = new MessageChannel();
    const asyncReplies = new MessageChannel();
    this.commands = commands.port1;
    this.syncReplies = syncReplies.port1;
    this.asyncReplies = asyncReplies.port1;
    const workerData: WriterThreadData = {
      opts,
      driverPath: DRIVER_PATH,
      words: this.words.buffer as SharedArrayBuffer,
      slot: SLOT,
      reply: REPLY,
      commands: commands.port2,
      syncReplies: syncReplies.port2,
      asyncReplies: asyncReplies.port2,
    };
    this.worker = new Worker(writerSource(), {
      eval: true,
      workerData,
      transferList: [commands.port2, syncReplies.port2, asyncReplies.port2],
    });
    this.worker.unref();
    this.asyncReplies.on('message', (reply: WriterReply) => this.answer(reply));
    this.asyncReplies.unref();
    this.worker.on('error', (err) => this.die(err));
    this.exited = new Promise((resolve) => {
      this.worker.on('exit', (code) => {
        if (!this.closing) this.die(new Error(`the writer thread exited with code ${code}`));
        resolve();
      });
    });
  }

  sync(op: WriterOp): WriterReply {
    if (this.failure) throw this.failure;
    const done = Atomics.load(this.words, SLOT.done);
    this.send(op);
    while (Atomics.load(this.words, SLOT.done) === done) Atomics.wait(this.words, SLOT.done, done);
    const m = receiveMessageOnPort(this.syncReplies);
    if (m) return m.message as WriterReply;
    // The writer marked itself dead (SLOT.dead) on its way out; its 'error' event has not arrived yet.
    throw this.die(new Error('the writer thread failed while running a statement'));
  }

  async(op: WriterOp): Promise<WriterReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.asyncReplies.ref();
      this.waiting.set(op.id, { resolve, reject });
      this.send(op);
    });
  }

  post(op: WriterOp): void {
    if (this.failure) throw this.failure;
    this.send(op);
  }

  async close(): Promise<void> {
    if (!this.closing && !this.failure) {
      this.closing = true;
      // Held until the writer has closed its connection: a process ending now would cut that short.
      this.worker.ref();
      this.send({ id: 0, reply: REPLY.none, close: true });
    }
    this.closing = true;
    await this.exited;
    this.asyncReplies.close();
    this.syncReplies.close();
    this.commands.close();
  }

  private send(op: WriterOp): void {
    this.commands.postMessage(op);
    Atomics.add(this.words, SLOT.wake, 1);
    Atomics.notify(this.words, SLOT.wake);
  }

  private answer(reply: WriterReply): void {
    const w = this.waiting.get(reply.id);
    if (!w) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.asyncReplies.unref();
    w.resolve(reply);
  }

  /**
   * The writer is gone: every op in flight and every later one fails with store_unavailable. A commit
   * it may have finished is not reported as done, so nothing is acknowledged that might be missing;
   * what it did commit is in the WAL, and the next start-up reads it back.
   */
  private die(cause: unknown): AppError {
    if (this.failure) return this.failure;
    const err = new AppError(
      'store_unavailable',
      'The store writer thread stopped; restart the gateway (committed data is kept).',
      undefined,
      { cause },
    );
    this.failure = err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
    this.asyncReplies.close();
    this.syncReplies.close();
    this.commands.close();
    if (!this.closing) this.onFatal(err);
    return err;
  }
}
