import type pg from 'pg';
import type { Logger } from 'pino';
import type { Envelope, EnvelopeInput } from '../envelope/index.js';
import { startWorker, type Worker, type WorkerSpec } from '../kernel/worker.js';
import type { Db, Sql } from '../store/port.js';
import { one } from '../store/port.js';
import { PostgresDb } from '../store/postgres.js';
import { taskEvent } from './events.js';
import * as q from './sql.js';

/** A tick handles at most this many stalls, so one tick never holds the store for long. */
const STALL_BATCH = 100;
/** After an error the loop waits up to a minute, doubling, instead of spinning on a broken store. */
const MAX_BACKOFF_MS = 60_000;
/** Arbitrary but fixed: every replica must ask for the same advisory lock. */
export const SUPERVISOR_LOCK_KEY = 0x7461736b; // 'task'

export interface SupervisorDeps {
  db: Db;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  now: () => number;
  logger: Logger;
  stallAfterMs: number;
  intervalMs: number;
  /** Decides whether this replica may act this tick; default: the PostgreSQL advisory lock, or always on SQLite. */
  leader?: Leadership;
}

export interface Leadership {
  acquire(): Promise<boolean>;
  release(): Promise<void>;
  /** Inside each stall's transaction: throws when this replica lost its term meanwhile (the cluster's fencing token). */
  fence?(tx: Db): Promise<void>;
}

/**
 * Watches tasks from outside the agent, so a hung agent is noticed even though it says nothing. A kernel
 * worker: each tick asks the store for working tasks quiet for longer than `stallAfterMs` and raises
 * `agent.task.stalled` once per stall (the mark is cleared by the next `touch`).
 */
export class Supervisor {
  private worker: Worker | undefined;
  private readonly leader: Leadership;

  constructor(private readonly deps: SupervisorDeps) {
    this.leader = deps.leader ?? defaultLeadership(deps.db);
  }

  /** The loop as plain data, for whoever runs the workers (`start` below, for now). */
  workerSpec(): WorkerSpec {
    const intervalMs = this.deps.intervalMs;
    return {
      name: 'tasks.supervisor',
      intervalMs,
      immediate: true,
      backoff: { minMs: Math.min(intervalMs * 2, MAX_BACKOFF_MS), maxMs: MAX_BACKOFF_MS, factor: 2 },
      tick: async () => {
        await this.tick();
      },
      onError: (err, retryInMs) => this.deps.logger.warn({ err, retryInMs }, 'task supervisor tick failed'),
    };
  }

  start(): void {
    this.worker ??= startWorker(this.workerSpec());
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    await this.leader.release();
  }

  /** One pass; returns how many stalls it raised. Exposed so tests drive it with an injected clock. */
  async tick(): Promise<number> {
    if (!(await this.leader.acquire())) return 0;
    const now = this.deps.now();
    const cutoff = now - this.deps.stallAfterMs;
    const rows = await this.deps.db.query<q.TaskRow>(q.selectStalled(cutoff, STALL_BATCH));
    let raised = 0;
    for (const candidate of rows) {
      const done = await this.deps.db.tx(async (tx) => {
        await this.leader.fence?.(tx);
        const row = await one<q.TaskRow>(tx, q.markStalled(candidate.id, cutoff, now));
        if (!row) return false;
        const quietFor = Math.round((now - Number(row.last_activity_at)) / 1000);
        await this.deps.emit(taskEvent(row, 'agent.task.stalled', { quiet_seconds: quietFor }), tx);
        return true;
      });
      if (done) raised += 1;
    }
    return raised;
  }
}

export function defaultLeadership(db: Db): Leadership {
  if (db instanceof PostgresDb) return new AdvisoryLock(db, SUPERVISOR_LOCK_KEY);
  // One SQLite file has one gateway writing to it: that gateway is the leader.
  return { acquire: async () => true, release: async () => {} };
}

type PoolClient = pg.PoolClient;

/** The lock lives on a connection of its own, outside the `Db` port: the statement goes to it directly. */
function run<T extends pg.QueryResultRow = pg.QueryResultRow>(client: PoolClient, stmt: Sql) {
  return client.query<T>(stmt.text, stmt.values ? [...stmt.values] : undefined);
}

/**
 * Only one replica supervises. The lock is session-scoped, so it lives on a dedicated connection held
 * for as long as this replica leads; if that connection dies, PostgreSQL frees the lock and another
 * replica takes over on its next tick.
 */
export class AdvisoryLock implements Leadership {
  private client: PoolClient | undefined;

  constructor(
    private readonly db: PostgresDb,
    private readonly key: number,
  ) {}

  async acquire(): Promise<boolean> {
    if (this.client) {
      // A dead connection has lost the lock without telling us: check before acting as leader.
      const held = this.client;
      try {
        await run(held, q.leadershipAlive());
        return true;
      } catch {
        this.lost(held);
      }
    }
    const client = await this.db.pool.connect();
    try {
      const res = await run<{ ok: boolean }>(client, q.tryLeadership(this.key));
      if (res.rows[0]?.ok !== true) {
        client.release();
        return false;
      }
    } catch (err) {
      client.release(true);
      throw err;
    }
    client.on('error', () => this.lost(client));
    this.client = client;
    return true;
  }

  async release(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    try {
      await run(client, q.releaseLeadership(this.key));
      client.release();
    } catch {
      client.release(true);
    }
  }

  get held(): boolean {
    return this.client !== undefined;
  }

  private lost(client: PoolClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.release(true);
  }
}
