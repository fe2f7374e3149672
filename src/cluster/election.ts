import type { Logger } from 'pino';
import type { Db } from '../store/port.js';
import { one } from '../store/port.js';
import { NotLeaderError } from './port.js';
import * as q from './sql.js';

export interface ElectionOptions {
  db: Db;
  replica: { id: string; name: string; host: string; pid: number };
  heartbeatMs: number;
  leaseMs: number;
  forgetAfterMs: number;
  logger: Logger;
  /** Monotonic milliseconds (performance.now); injected by tests. */
  clock?: () => number;
}

/**
 * Leader election over a lease row (docs/scale.md says why a lease table and not an advisory lock).
 * Each heartbeat is one transaction: record this replica's heartbeat, then renew the lease if it is
 * ours, take it (next token) if it ran out, or follow. Lease times are the database's clock; whether
 * this replica may act is measured on its own monotonic clock from the moment before it asked, so it
 * stops believing it leads no later than the database lets anyone else take over.
 *
 * On SQLite the store has one process: the lease is taken at start whatever it says (a crashed
 * earlier process left it), so the gateway always leads, and each start is a new term.
 */
export class Election {
  private token: number | undefined;
  /** Local monotonic time until which this replica may act as leader. */
  private until = 0;
  private startedAt = 0;
  private leading = false;
  private readonly listeners = new Set<(leader: boolean, token: number | undefined) => void>();
  private readonly clock: () => number;

  constructor(private readonly opts: ElectionOptions) {
    this.clock = opts.clock ?? (() => performance.now());
  }

  get replicaId(): string {
    return this.opts.replica.id;
  }

  isLeader(): boolean {
    return this.token !== undefined && this.clock() < this.until;
  }

  fencingToken(): number | undefined {
    return this.isLeader() ? this.token : undefined;
  }

  onLeaderChange(fn: (leader: boolean, token: number | undefined) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** One heartbeat; returns whether this replica leads after it. */
  async beat(): Promise<boolean> {
    const asked = this.clock();
    const db = this.opts.db;
    const single = db.dialect === 'sqlite';
    const me = this.opts.replica.id;
    const token = await db.tx(async (tx) => {
      const now = Number((await one<{ now: number }>(tx, q.selectNow(db.dialect)))!.now);
      if (this.startedAt === 0) this.startedAt = now;
      await tx.query(
        q.upsertReplica({ ...this.opts.replica, started_at: this.startedAt, heartbeat_at: now }),
      );
      const expires = now + this.opts.leaseMs;
      const lease = await one<q.LeaseRow>(tx, q.lockLease(db.dialect));
      if (!lease) {
        const won = await one<{ token: number }>(tx, q.insertLease(me, now, expires));
        if (!won) return undefined; // another replica inserted it first: follow until it runs out
        await tx.query(q.insertTerm(1, me, now));
        return 1;
      }
      const held = Number(lease.token);
      // Still ours (even run out: nobody took it in between, so the term goes on under the same token).
      if (lease.replica_id === me && (!single || this.token === held)) {
        const renewed = await one<{ token: number }>(tx, q.renewLease(me, held, expires));
        return renewed ? held : undefined;
      }
      if (single || Number(lease.expires_at) <= now) {
        const taken = await one<{ token: number }>(tx, q.takeLease(me, held, now, expires));
        if (!taken) return undefined;
        const next = Number(taken.token);
        await tx.query(q.insertTerm(next, me, now));
        return next;
      }
      return undefined;
    });
    if (token !== undefined) {
      this.token = token;
      this.until = asked + this.opts.leaseMs;
    } else {
      this.token = undefined;
    }
    this.settle();
    return this.isLeader();
  }

  /** Tells the listeners when leadership changed since they were last told. */
  settle(): void {
    const now = this.isLeader();
    if (now === this.leading) return;
    this.leading = now;
    const token = this.fencingToken();
    this.opts.logger.info(
      { replica: this.replicaId, leader: now, fencing_token: token },
      now ? 'cluster: this replica leads' : 'cluster: this replica no longer leads',
    );
    for (const fn of [...this.listeners]) {
      try {
        fn(now, token);
      } catch (err) {
        this.opts.logger.error({ err }, 'cluster: a leader-change listener failed');
      }
    }
  }

  async fence(tx: Db): Promise<void> {
    const token = this.fencingToken();
    if (token === undefined) throw new NotLeaderError(this.replicaId);
    const row = await one(tx, q.fenceLease(tx.dialect, this.replicaId, token));
    if (!row) {
      this.token = undefined;
      this.settle();
      throw new NotLeaderError(this.replicaId);
    }
  }

  /** The leader's housekeeping: forget replicas not heard from for a long time. */
  async prune(): Promise<void> {
    if (!this.isLeader()) return;
    const db = this.opts.db;
    const now = Number((await one<{ now: number }>(db, q.selectNow(db.dialect)))!.now);
    await db.query(q.pruneReplicas(now - this.opts.forgetAfterMs));
  }

  /** A clean stop: hand the lease back and mark this replica stopped. */
  async resign(): Promise<void> {
    const token = this.token;
    this.token = undefined;
    this.settle();
    const db = this.opts.db;
    await db.tx(async (tx) => {
      const now = Number((await one<{ now: number }>(tx, q.selectNow(db.dialect)))!.now);
      if (token !== undefined) await tx.query(q.releaseLease(this.replicaId, token));
      await tx.query(q.markStopped(this.replicaId, now));
    });
  }
}
