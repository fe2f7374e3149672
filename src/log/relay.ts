import type { Envelope } from '../envelope/index.js';
import type { Db, Sql } from '../store/port.js';
import { markProcessed, wasProcessed } from './inbox.js';
import type { EventLog, HandedEvent } from './log.js';
import { BUS_TOPIC } from './log.js';
import { activeSpan, failSpan, tracer } from '../trace/span.js';
import {
  claimOutbox,
  claimOutboxFollowers,
  deleteOutboxRows,
  releaseOutboxRow,
  selectEventBodies,
} from './sql.js';
import { prefix } from '../text/index.js';
import {
  RELAY_DEFAULTS,
  type RelayLoop,
  type RelayOptions,
  type RelayStats,
  type RelayWorker,
  type Subscriber,
} from './subscriber.js';

export { RELAY_DEFAULTS } from './subscriber.js';
export type { RelayLoop, RelayOptions, RelayStats, RelayWorker, Subscriber } from './subscriber.js';

/** Hand-offs queued or running at most; past it, appends take the claim path (the outbox buffers them). */
const HANDOFF_QUEUE = 2000;
/** Acknowledged rows per DELETE statement (well under SQLite's bound-parameter limit). */
const ACK_CHUNK = 500;
/** Bodies per read of a pipelined claim's events (the same bound). */
const BODY_CHUNK = 500;

/** Claim rounds per transaction: each round can free one more row of every correlation it finished. */
const CLAIM_ROUNDS = 4;
/** A pipelined relay holds at most this many batches claimed and not yet handled. */
const PIPELINE_DEPTH = 4;

/**
 * A chained row is handled only while this share of its lease is left; past it, it is released for
 * the next claim, so no other worker can take a row this one is about to handle (pipelined chains
 * can be long behind a slow subscriber).
 */
const LEASE_GUARD = 1 / 3;

/** A row on a correlation's chain: handed off by the log, or claimed by a pipelined pass. */
interface ChainedRow extends HandedEvent {
  attempts: number;
  /** When its lease runs out (a little before, for a claimed row: the lease is taken as the claim began). */
  leaseUntil: number;
  /** From a pipelined claim (it counts against the pipeline's room), not a hand-off. */
  claimed: boolean;
  /** The event as stored, when it was read for the claim (`Subscriber.handle`'s `body`). */
  body?: string;
}

interface ClaimedRow {
  id: number;
  event_id: string;
  correlation_id: string;
  attempts: number;
  /** The event's type, read with the claim: a row no subscriber accepts needs no body read. */
  type: string | null;
}

/**
 * Moves outbox rows to in-process subscribers: at least once, in order per correlation id. Only the
 * oldest open row of a correlation can be claimed, so a later event never overtakes an earlier one,
 * even across processes. Its loop is a kernel worker: it sleeps when idle, is woken by appends, and
 * backs off on store errors instead of spinning.
 */
export class Relay {
  private readonly subscribers: Subscriber[] = [];
  private readonly opts: Required<Omit<RelayOptions, 'logger' | 'run'>> &
    Pick<RelayOptions, 'logger' | 'run'>;
  private worker: RelayWorker | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly workerId = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  /**
   * Rows every subscriber has handled, deleted in the same transaction as the next claim: one commit
   * per batch instead of one per row. They stay `claimed` until then, so no other worker takes them.
   */
  private done: number[] = [];
  /** Whether the last pass may have left rows claimable now (handed-out rows free their followers). */
  private more = false;
  /** Per correlation, the tail of its hand-off chain: a correlation's events run one after another. */
  private readonly chains = new Map<string, { tail: Promise<void>; failed: boolean }>();
  private handing = 0;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private idle: Promise<void> = Promise.resolve();
  private settle: (() => void) | undefined;
  private readonly counts: RelayStats = { claims: 0, claimedRows: 0, handoffs: 0, acks: 0, ackedRows: 0 };

  constructor(
    private readonly db: Db,
    private readonly log: EventLog,
    opts: RelayOptions = {},
  ) {
    this.opts = { ...RELAY_DEFAULTS, now: Date.now, ...opts };
  }

  /** Claim transactions, rows claimed, in-process hand-offs and acknowledgements since start. */
  stats(): RelayStats {
    return { ...this.counts };
  }

  subscribe(sub: Subscriber): void {
    if (this.subscribers.some((s) => s.name === sub.name))
      throw new Error(`subscriber ${sub.name} already registered`);
    this.subscribers.push(sub);
  }

  /** The relay's loop, for whoever runs the workers (`start` below, for now). */
  loop(): RelayLoop {
    return {
      name: this.opts.topic === BUS_TOPIC ? 'relay' : `relay.${this.opts.topic}`,
      intervalMs: this.opts.idleMs,
      immediate: true,
      backoff: { minMs: 100, maxMs: this.opts.maxBackoffMs, factor: 2 },
      // A pass that claimed rows may have freed their correlations' next rows: claim again at once.
      tick: async () => (await this.runOnce()) > 0 && this.more,
      onError: (err, backoffMs) =>
        this.opts.logger?.error({ err, backoffMs }, 'outbox relay failed; backing off'),
    };
  }

  start(): void {
    if (this.worker) return;
    if (!this.opts.run) throw new Error('the relay was built without a worker runner (RelayOptions.run)');
    const worker = this.opts.run(this.loop());
    this.worker = worker;
    this.unsubscribe = this.log.onAppend(() => worker.wake());
    // SQLite: one process owns the store, so events are handed over in-process right after their commit.
    // PostgreSQL replicas share the outbox; the claim keeps their order, so the hand-off stays off there.
    if (this.db.dialect === 'sqlite' && this.opts.topic === BUS_TOPIC) {
      this.log.setHandoff({
        marker: `handed off by ${this.workerId}`,
        leaseMs: this.opts.leaseMs,
        wants: () => this.handing < HANDOFF_QUEUE,
        accepts: (type) => this.wanted(type),
        take: (rows) => this.take(rows),
      });
    }
  }

  async stop(): Promise<void> {
    if (this.opts.topic === BUS_TOPIC) this.log.setHandoff(undefined);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.idle;
    await this.worker?.stop();
    this.worker = undefined;
    await this.flushDone().catch(() => {
      // The store is down: the leases run out and the rows are handed out again (at least once).
    });
  }

  /** Processes ready rows until none is left (tests and `drain` on shutdown). */
  async drain(maxRounds = 10_000): Promise<void> {
    await this.idle;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.runOnce();
      await this.idle; // a pipelined pass returns before its chains finish
      if (n === 0) break;
    }
    await this.flushDone();
  }

  private async flushDone(): Promise<void> {
    const done = this.done.splice(0);
    if (done.length > 0) await this.db.tx((tx) => this.ack(tx, done));
  }

  private async ack(db: Db, ids: number[]): Promise<void> {
    for (let i = 0; i < ids.length; i += ACK_CHUNK) {
      const chunk = ids.slice(i, i + ACK_CHUNK);
      await db.query(deleteOutboxRows(chunk));
      this.counts.acks++;
      this.counts.ackedRows += chunk.length;
    }
  }

  /**
   * The events of one commit, handed over right after it (their outbox rows are claimed by this relay).
   * Each correlation's events run in order; once one fails, the rest of its chain goes back to the claim
   * path behind it. Handled rows are acknowledged with the next claim (the loop's poll), in one batch.
   */
  private take(rows: HandedEvent[]): void {
    this.counts.handoffs += rows.length;
    // The log leased them at its commit, a moment ago: counting from now errs by that moment only.
    const leaseUntil = this.opts.now() + this.opts.leaseMs;
    this.chain(rows.map((r) => ({ ...r, attempts: 0, leaseUntil, claimed: false })));
  }

  /** Appends each row to its correlation's chain (hand-offs, and a pipelined relay's claims). */
  private chain(rows: ChainedRow[]): void {
    if (rows.length === 0) return;
    if (this.handing === 0) this.idle = new Promise((resolve) => (this.settle = resolve));
    for (const row of rows) {
      this.handing++;
      if (row.claimed) this.claimedOut++;
      const key = row.envelope.correlation_id;
      const chain = this.chains.get(key) ?? { tail: Promise.resolve(), failed: false };
      const tail = chain.tail.then(() => this.handOne(row, chain));
      chain.tail = tail;
      this.chains.set(key, chain);
      void tail.finally(() => {
        if (this.chains.get(key)?.tail === tail) this.chains.delete(key);
        if (row.claimed) this.claimedOut--;
        if (--this.handing === 0) this.settle?.();
        this.roomWaiter?.(); // the pipelined pass re-checks whether it may claim
        if (this.done.length >= ACK_CHUNK) this.worker?.wake();
      });
    }
  }

  private async handOne(row: ChainedRow, chain: { failed: boolean }): Promise<void> {
    if (chain.failed)
      return this.requeue(row, 'an earlier event of its correlation failed; relayed after it');
    if (!this.wanted(row.envelope.type)) {
      this.done.push(row.id);
      return;
    }
    const slot = this.subscribers.some((s) => s.accepts(row.envelope.type));
    if (slot) {
      const wait = this.slot();
      if (wait) await wait;
    }
    try {
      // Checked once its slot is free (the wait for one can be long): handled only with time to spare.
      if (row.leaseUntil - this.opts.leaseMs * LEASE_GUARD < this.opts.now()) {
        chain.failed = true; // the rest of the chain follows it to the claim path, in order
        return await this.requeue(row, 'its lease ran out before its turn; relayed at the next claim');
      }
      const ok = await this.process(
        {
          id: row.id,
          event_id: row.envelope.event_id,
          correlation_id: row.envelope.correlation_id,
          attempts: row.attempts,
          type: row.envelope.type,
        },
        row.envelope,
        row.body,
      );
      if (!ok) {
        chain.failed = true;
        this.worker?.wake();
      }
    } finally {
      if (slot) this.release();
    }
  }

  /**
   * Puts a chained row back for the claim path, ready at once: an earlier row of its correlation failed
   * and waits for its retry (the claim takes only a correlation's oldest open row, so this one follows
   * it), or its lease is running out before its turn.
   */
  private async requeue(row: ChainedRow, why: string): Promise<void> {
    await this.db
      .query(
        releaseOutboxRow({
          id: row.id,
          status: 'pending',
          attempts: row.attempts,
          availableAt: this.opts.now(),
          error: why,
        }),
      )
      .catch(() => {
        // The store is down: the lease runs out and the claim takes the row (still in order).
      });
    this.worker?.wake();
  }

  /**
   * At most `concurrency` hand-offs run their subscribers at once. A free slot is taken at once (no
   * promise: one per event adds up on the NATS path); a full set queues the caller, and `release`
   * hands it the slot it frees.
   */
  private slot(): Promise<void> | undefined {
    if (this.running < this.opts.concurrency) {
      this.running++;
      return undefined;
    }
    return new Promise<void>((r) => this.waiting.push(r));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /** Claims one batch and hands each row to the subscribers; returns how many rows it claimed. */
  async runOnce(): Promise<number> {
    if (this.opts.pipeline) return this.runPipelined();
    const { rows, finished, more } = await this.claim();
    this.more = more;
    // The batch's bodies in one read instead of one per row (a row missing here is read on its own).
    const bodies =
      rows.length > 1
        ? await this.log.getMany(rows.map((r) => r.event_id)).catch(() => undefined)
        : undefined;
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++]!;
        await this.process(row, bodies?.get(row.event_id));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, rows.length) }, worker));
    return rows.length + finished;
  }

  /** Rows handed to chains and not finished that make a pipelined relay wait before it claims more. */
  private get room(): number {
    return this.opts.batchSize * PIPELINE_DEPTH;
  }

  private roomWaiter: (() => void) | undefined;
  /** Rows a pipelined claim put on chains and not finished (hand-offs are not counted: they need no room). */
  private claimedOut = 0;
  /** Whether the last pipelined claim found a whole batch (more may be ready at once). */
  private lastFull = true;

  /**
   * A pipelined pass: waits until fewer than `room` rows are out, claims (heads and the runs behind
   * them), reads the bodies in one query and appends each row to its correlation's chain; it returns
   * without waiting for them, so the next claim overlaps the publishing.
   */
  private async runPipelined(): Promise<number> {
    // Claims come a batch at a time: with rows out, wait until a batch's worth has room. After a
    // claim that found less than a batch (rows trickling in as they are queued), wait for the chains
    // to finish first, so the next claim takes what gathered meanwhile in one transaction instead of
    // one claim per wake.
    // And while a full set of rows already waits for a concurrency slot (a slow subscriber: the bus's
    // admission on PostgreSQL), claiming more would only queue rows until their leases run out.
    while (
      this.claimedOut > this.room - this.opts.batchSize ||
      (!this.lastFull && this.claimedOut > 0) ||
      this.waiting.length >= this.opts.concurrency
    )
      await new Promise<void>((r) => (this.roomWaiter = r));
    this.roomWaiter = undefined;
    const leaseUntil = this.opts.now() + this.opts.leaseMs;
    const { rows, finished, more } = await this.claim();
    this.more = more;
    this.lastFull = rows.length >= this.opts.batchSize;
    if (rows.length === 0) return finished;
    const bodies = await this.bodies(rows.map((r) => r.event_id)).catch(() => undefined);
    const ready: ChainedRow[] = [];
    // A correlation's rows join its chain oldest first (RETURNING promises no order).
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const row of rows) {
      const body = bodies?.get(row.event_id);
      const envelope =
        body === undefined ? (await this.log.get(row.event_id))?.envelope : (JSON.parse(body) as Envelope);
      if (envelope)
        ready.push({ id: row.id, envelope, body, attempts: Number(row.attempts), leaseUntil, claimed: true });
      // Not in the log: process() records the failure on the row as the batch path does.
      else await this.process(row);
    }
    this.chain(ready);
    return rows.length + finished;
  }

  /** The claimed events as stored, by id, in one read per BODY_CHUNK (`EventLog.getMany`, unparsed). */
  private async bodies(eventIds: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < eventIds.length; i += BODY_CHUNK) {
      const rows = await this.db.query<{ event_id: string; body: string }>(
        selectEventBodies(eventIds.slice(i, i + BODY_CHUNK)),
      );
      for (const r of rows) out.set(r.event_id, r.body);
    }
    return out;
  }

  /**
   * One transaction: deletes the rows finished since the last claim, claims, and finishes at once the
   * claimed rows no subscriber here takes (most events: only a few types have subscribers). Finishing
   * one frees the next row of its correlation, so the claim repeats (a few rounds at most) and a
   * report's chain of events costs one commit instead of one per event. Returns the rows to hand out.
   */
  private async claim(): Promise<{ rows: ClaimedRow[]; finished: number; more: boolean }> {
    const done = this.done.splice(0);
    try {
      this.counts.claims++;
      return await this.db.tx(async (tx) => {
        if (done.length > 0) await this.ack(tx, done);
        const work: ClaimedRow[] = [];
        let finished = 0;
        // Rows handed out free their followers once deleted (next pass); so may a full or last round.
        let more = true;
        for (let round = 0; round < CLAIM_ROUNDS; round++) {
          const rows = await tx.query<ClaimedRow>(this.claimSql());
          // Pipelined: the ready rows behind the heads just taken, and behind those still out.
          if (this.opts.pipeline) {
            const limit = this.room - this.claimedOut - work.length - rows.length;
            if (limit > 0) rows.push(...(await tx.query<ClaimedRow>(this.followersSql(limit))));
          }
          this.counts.claimedRows += rows.length;
          const idle = rows.filter((r) => r.type !== null && !this.wanted(r.type));
          work.push(...rows.filter((r) => r.type === null || this.wanted(r.type)));
          if (idle.length === 0) {
            more = work.length > 0 || rows.length >= this.opts.batchSize;
            break;
          }
          await this.ack(
            tx,
            idle.map((r) => r.id),
          );
          finished += idle.length;
        }
        return { rows: work, finished, more };
      });
    } catch (err) {
      this.done.unshift(...done);
      throw err;
    }
  }

  private wanted(type: string): boolean {
    return this.subscribers.some((s) => s.accepts(type));
  }

  private followersSql(limit: number): Sql {
    const now = this.opts.now();
    return claimOutboxFollowers(this.db.dialect, {
      topic: this.opts.topic,
      now,
      leaseUntil: now + this.opts.leaseMs,
      claimedBy: `claimed by ${this.workerId}`,
      limit,
      types: !this.opts.everyEvent,
    });
  }

  private claimSql(): Sql {
    const now = this.opts.now();
    return claimOutbox(this.db.dialect, {
      topic: this.opts.topic,
      now,
      leaseUntil: now + this.opts.leaseMs,
      claimedBy: `claimed by ${this.workerId}`,
      limit: this.opts.batchSize,
      types: !this.opts.everyEvent,
    });
  }

  /** Hands one row to its subscribers; false when one failed (the row was released for a retry). */
  private async process(row: ClaimedRow, known?: Envelope, body?: string): Promise<boolean> {
    let current: Subscriber | undefined;
    try {
      const type = row.type;
      if (type === null || this.subscribers.some((s) => s.accepts(type))) {
        const envelope = known ?? (await this.log.get(row.event_id))?.envelope;
        if (!envelope)
          throw new Error(`outbox row ${row.id} names event ${row.event_id}, which is not in the log`);
        for (const sub of this.subscribers) {
          if (!sub.accepts(envelope.type)) continue;
          current = sub;
          if (sub.ownsInbox) {
            await handled(sub, envelope, body);
            continue;
          }
          if (await wasProcessed(this.db, sub.name, row.event_id)) continue;
          await handled(sub, envelope, body);
          await markProcessed(this.db, sub.name, row.event_id, this.opts.now());
        }
      }
      this.done.push(row.id);
      return true;
    } catch (err) {
      const attempts = Number(row.attempts) + 1;
      const dead = attempts >= this.opts.maxAttempts;
      const delay = Math.min(1000 * 2 ** (attempts - 1), this.opts.maxBackoffMs);
      this.opts.logger?.warn(
        { err, eventId: row.event_id, attempts, dead, consumer: current?.name },
        'outbox subscriber failed',
      );
      await this.db
        .query(
          releaseOutboxRow({
            id: row.id,
            status: dead ? 'dead' : 'pending',
            attempts,
            availableAt: this.opts.now() + delay,
            error: prefix(String((err as Error)?.message ?? err), 500),
            consumer: current?.name ?? null,
            consumerVersion: current?.version ?? null,
            deadAt: this.opts.now(),
          }),
        )
        .catch(() => {
          // The store is down: the lease runs out and the row is claimed again later.
        });
      return false;
    }
  }
}

/**
 * A subscriber's handling of one event, as a step of the trace that appended it when there is one
 * (the in-process hand-off runs in the appending request's context); otherwise just the call.
 */
function handled(sub: Subscriber, envelope: Envelope, body?: string): Promise<void> {
  if (!activeSpan()) return sub.handle(envelope, body);
  return tracer().startActiveSpan(`relay ${sub.name}`, async (span) => {
    span.setAttributes({
      'switchboard.event_id': envelope.event_id,
      'switchboard.event_type': envelope.type,
    });
    try {
      await sub.handle(envelope, body);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}
