import {
  buildEnvelope,
  canonicalJson,
  checkEnvelope,
  type Envelope,
  type EnvelopeDefaults,
  type EnvelopeInput,
} from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { activeSpan, tracer } from '../trace/span.js';
import type { Db } from '../store/port.js';
import { linkHash } from './chain.js';
import * as q from './sql.js';

/** Every event gets one outbox row on this topic; the relay hands it to in-process subscribers. */
export const BUS_TOPIC = 'bus';
/** Rows per outbox INSERT (two parameters each, well under SQLite's bound-parameter limit). */
const ENQUEUE_CHUNK = 400;
/** Events per INSERT on SQLite (13 parameters each, well under its bound-parameter limit). */
const INSERT_CHUNK = 200;
/** Events per chained append statement on PostgreSQL (its arrays have no small bound; this keeps a statement modest). */
const PG_APPEND_CHUNK = 1000;
/** Ids per query of `getMany` (well under SQLite's bound-parameter limit). */
const GET_CHUNK = 500;
/** A page of `list` is capped so an unfiltered `GET /v1/events` cannot load the whole log. */
export const MAX_EVENTS_PAGE = 1000;

/**
 * The relay's side of the in-process hand-off (SQLite): `EventLog.append` writes outbox rows already
 * claimed by `marker` while `wants()` holds, and passes the committed events to `take` right after the
 * commit, in commit order.
 */
export interface Handoff {
  marker: string;
  leaseMs: number;
  /** False while the relay's queue is full: rows then take the claim path (the outbox is the buffer). */
  wants(): boolean;
  /**
   * Whether a subscriber here takes events of `type`. One that none takes gets no bus row while the
   * hand-off runs: the relay would delete it unread (most of a request's events, e.g. a touch's).
   */
  accepts(type: string): boolean;
  take(rows: HandedEvent[]): void;
}

export interface HandedEvent {
  /** The outbox row, claimed by the hand-off's marker. */
  id: number;
  envelope: Envelope;
}

export interface StoredEvent {
  seq: number;
  envelope: Envelope;
}

/** A dead-letter of the outbox: an event a subscriber failed on until the relay parked it. */
export interface DeadOutboxView {
  id: number;
  event_id: string;
  /** `bus` (the in-process subscribers) or another relay's topic (`nats`). */
  topic: string;
  type: string | null;
  correlation_id: string;
  attempts: number;
  last_error: string | null;
  /** The subscriber that failed last, and the version it declared (null: none declared). */
  consumer: string | null;
  consumer_version: string | null;
  dead_at: string | null;
  created_at: string;
}

/**
 * The append-only, hash-chained event log. `append` writes the event, the chain head and the event's
 * outbox rows in one transaction (joining the caller's when given one), so an event never exists without
 * its outbox rows and vice versa. While the relay runs in this process (SQLite's hand-off), an event of
 * a type no subscriber takes gets no bus row: the relay would only have deleted it unread.
 */
export class EventLog {
  private readonly listeners = new Set<() => void>();
  private handoff: Handoff | undefined;
  /** Topics besides the bus that every appended event is queued on, in the append's own transaction. */
  private readonly topics: string[] = [];
  /** Events appended in a transaction that has not reached its end yet, by the transaction's port. */
  private readonly pending = new WeakMap<Db, Envelope[]>();

  constructor(
    private readonly db: Db,
    private readonly defaults: EnvelopeDefaults,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called after an append commits (in this process), so the relay can wake without polling. */
  onAppend(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * From now on every appended event also gets an outbox row on `topic`, written with the event (one
   * transaction), for a relay of its own (the NATS publisher, registered before any module starts:
   * `Module.outboxTopics`). Returns the undo.
   */
  alsoQueue(topic: string): () => void {
    if (topic === BUS_TOPIC) throw new Error(`topic ${BUS_TOPIC} is always written`);
    if (!this.topics.includes(topic)) this.topics.push(topic);
    return () => {
      const i = this.topics.indexOf(topic);
      if (i >= 0) this.topics.splice(i, 1);
    };
  }

  /** Set by the relay while it runs in this process (SQLite only); undefined turns the hand-off off. */
  setHandoff(h: Handoff | undefined): void {
    this.handoff = h;
  }

  async append(input: EnvelopeInput, db?: Db): Promise<Envelope> {
    const [env] = await this.appendMany([input], db);
    return env!;
  }

  async appendMany(inputs: EnvelopeInput[], db?: Db): Promise<Envelope[]> {
    // A step of the request's trace when one is running (telemetry on); otherwise nothing at all.
    if (!activeSpan()) return this.appendTraced(inputs, db);
    return tracer().startActiveSpan('log.append', async (span) => {
      try {
        const out = await this.appendTraced(inputs, db);
        span.setAttributes({
          'switchboard.event_types': out.map((e) => e.type),
          'switchboard.event_ids': out.map((e) => e.event_id),
        });
        return out;
      } finally {
        span.end();
      }
    });
  }

  private async appendTraced(inputs: EnvelopeInput[], db?: Db): Promise<Envelope[]> {
    const now = this.now();
    const envelopes = inputs.map((input) => buildEnvelope(input, this.defaults, new Date(now)));
    for (const env of envelopes) {
      const problems = checkEnvelope(env);
      if (problems.length > 0) {
        throw new AppError('validation_failed', `envelope ${env.type} is invalid`, problems);
      }
    }
    if (db?.inTransaction && db.beforeCommit) {
      // In a caller's transaction the events wait for its end: every append of the transaction is then
      // one write (the head read and moved once, the events in one INSERT), and on PostgreSQL the
      // head's row lock is held for that write and the COMMIT only, not for the caller's other work.
      let pending = this.pending.get(db);
      if (!pending) {
        const list: Envelope[] = [];
        pending = list;
        this.pending.set(db, list);
        db.beforeCommit(() => {
          this.pending.delete(db);
          return this.write(list, db);
        });
      }
      pending.push(...envelopes);
      return envelopes;
    }
    await this.write(envelopes, db ?? this.db);
    return envelopes;
  }

  /** Chains and stores `envelopes` in one transaction (`db`'s when it is one). */
  private async write(envelopes: Envelope[], db: Db): Promise<void> {
    const now = this.now();
    if (db.dialect === 'postgres') {
      await this.appendPostgres(envelopes, now, db);
      return;
    }
    const handoff = this.handoff?.wants() ? this.handoff : undefined;
    const handed: HandedEvent[] = [];
    let queued = 0;
    const write = async (tx: Db) => {
      handed.length = 0;
      queued = 0;
      const head = (await tx.query<{ seq: number; hash: string }>(q.lockHead(tx.dialect)))[0];
      if (!head) throw new Error('log_head row is missing: the store was not migrated');
      let seq = Number(head.seq);
      let hash = head.hash;
      const rows: q.EventRow[] = [];
      for (const env of envelopes) {
        const body = canonicalJson(env);
        const prev = hash;
        seq += 1;
        hash = linkHash(prev, body);
        rows.push({ seq, ...eventColumns(env), body, prevHash: prev, hash, recordedAt: now });
      }
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await tx.query(q.insertEvents(rows.slice(i, i + INSERT_CHUNK)));
      }
      if (!handoff) {
        await queueOn(BUS_TOPIC, envelopes, tx, now);
        queued = envelopes.length;
      } else {
        const taken = envelopes.filter((e) => handoff.accepts(e.type));
        for (let i = 0; i < taken.length; i += ENQUEUE_CHUNK) {
          const chunk = taken.slice(i, i + ENQUEUE_CHUNK);
          const written = await tx.query<{ id: number; event_id: string; status: string }>(
            q.insertOutboxHandoffs(
              chunk.map((e) => ({ eventId: e.event_id, correlationId: e.correlation_id })),
              BUS_TOPIC,
              now,
              { marker: handoff.marker, leaseUntil: now + handoff.leaseMs },
            ),
          );
          const byEvent = new Map(written.map((r) => [r.event_id, r]));
          for (const env of chunk) {
            const row = byEvent.get(env.event_id);
            if (row?.status === 'claimed') handed.push({ id: Number(row.id), envelope: env });
            else queued++;
          }
        }
      }
      await this.queueTopics(envelopes, tx, now);
      await tx.query(q.updateHead(seq, hash));
    };
    const committed = () => {
      if (handed.length > 0) handoff!.take([...handed]);
      // Rows written `pending` need the relay's claim; handed-off ones do not.
      if (queued > 0 || !handoff || this.topics.length > 0) this.notify();
    };
    if (db.inTransaction) {
      await write(db);
      // The caller's transaction commits later: wake the relay then, not now (it would find nothing).
      db.afterCommit(committed);
    } else {
      await db.tx(write);
      committed();
    }
  }

  private async appendPostgres(envelopes: Envelope[], now: number, db: Db): Promise<void> {
    // One statement is atomic on its own, and inside a caller's transaction it simply joins it; the
    // other topics' rows need a transaction around both.
    const run = async (tx: Db) => {
      for (let i = 0; i < envelopes.length; i += PG_APPEND_CHUNK) {
        const rows = await tx.query(
          q.appendPg(
            envelopes
              .slice(i, i + PG_APPEND_CHUNK)
              .map((env) => ({ ...eventColumns(env), body: canonicalJson(env) })),
            now,
            BUS_TOPIC,
          ),
        );
        if (rows.length !== 1) throw new Error('log_head row is missing: the store was not migrated');
      }
      await this.queueTopics(envelopes, tx, now);
    };
    if (this.topics.length === 0 || db.inTransaction) await run(db);
    else await db.tx(run);
    if (db.inTransaction) db.afterCommit(() => this.notify());
    else this.notify();
  }

  /** The rows of `alsoQueue`'s topics for `envelopes`, in their order, into the append's transaction. */
  private async queueTopics(envelopes: readonly Envelope[], tx: Db, now: number): Promise<void> {
    for (const topic of this.topics) await queueOn(topic, envelopes, tx, now);
  }

  /**
   * Queues committed events again on another topic, for a relay of its own (the NATS publisher): that
   * relay's retries and order per correlation are its own, so a peer that is down holds up only its
   * topic, never the bus. One statement, in the order given; wakes the relays in this process after
   * the write (or the caller's commit).
   */
  async enqueue(envs: readonly Envelope[], topic: string, db: Db = this.db): Promise<void> {
    if (topic === BUS_TOPIC) throw new Error(`topic ${BUS_TOPIC} is written by append, not enqueue`);
    if (envs.length === 0) return;
    await queueOn(topic, envs, db, this.now());
    if (db.inTransaction) db.afterCommit(() => this.notify());
    else this.notify();
  }

  /**
   * Wakes the listeners (the relays in this process) for a pass. Appends call it themselves after their
   * commit, and only when they wrote a row a relay must claim: a hand-off needs no claim, and a wake per
   * request would cost a claim transaction per request. Callers need not; tests use it to force a pass.
   */
  notify(): void {
    for (const fn of this.listeners) fn();
  }

  async list(filter: Partial<q.EventFilter> = {}): Promise<StoredEvent[]> {
    const limit = Math.min(Math.max(1, filter.limit ?? 100), MAX_EVENTS_PAGE);
    const rows = await this.db.query<{ seq: number; body: string }>(
      q.selectEvents(this.db.dialect, { ...filter, limit }),
    );
    return rows.map((r) => ({ seq: Number(r.seq), envelope: JSON.parse(r.body) as Envelope }));
  }

  async get(eventId: string, db: Db = this.db): Promise<StoredEvent | undefined> {
    // An event this transaction appended is not written before the transaction's end; it has no seq yet.
    const waiting = this.pending.get(db)?.find((e) => e.event_id === eventId);
    if (waiting) return { seq: 0, envelope: waiting };
    const row = (await db.query<{ seq: number; body: string }>(q.selectEventBody(eventId)))[0];
    return row ? { seq: Number(row.seq), envelope: JSON.parse(row.body) as Envelope } : undefined;
  }

  /** Several events' envelopes by id, in one query (the relay's claimed batch); absent ids are left out. */
  async getMany(eventIds: readonly string[]): Promise<Map<string, Envelope>> {
    const out = new Map<string, Envelope>();
    for (let i = 0; i < eventIds.length; i += GET_CHUNK) {
      const rows = await this.db.query<{ event_id: string; body: string }>(
        q.selectEventBodies(eventIds.slice(i, i + GET_CHUNK)),
      );
      for (const r of rows) out.set(r.event_id, JSON.parse(r.body) as Envelope);
    }
    return out;
  }

  /** The seq of the newest event (0 for an empty log). */
  async lastSeq(): Promise<number> {
    const [head] = await this.db.query<{ seq: number }>(q.selectHead());
    return Number(head?.seq ?? 0);
  }

  /** Outbox rows not yet handed to every subscriber, leaving out the parked (`dead`) ones. */
  async outboxDepth(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(q.countOpenOutbox());
    return Number(row?.n ?? 0);
  }

  /**
   * How often the relay tried each event's subscribers, by event id. An event whose outbox row is gone
   * (every subscriber handled it) is absent.
   */
  async outboxAttempts(eventIds: readonly string[]): Promise<Map<string, number>> {
    if (eventIds.length === 0) return new Map();
    const rows = await this.db.query<{ event_id: string; attempts: number }>(
      q.selectOutboxAttempts(eventIds),
    );
    return new Map(rows.map((r) => [r.event_id, Number(r.attempts)]));
  }

  /**
   * Outbox rows parked as dead after the relay's last attempt (`RELAY_DEFAULTS.maxAttempts`), oldest
   * first, with the subscriber that failed and its version; `ids` narrows to those rows.
   */
  async deadOutbox(limit = 100, ids?: readonly number[]): Promise<DeadOutboxView[]> {
    const rows = await this.db.query<q.DeadOutboxRow>(q.selectDeadOutbox(limit, ids));
    return rows.map((r) => ({
      id: Number(r.id),
      event_id: r.event_id,
      topic: r.topic,
      type: r.type,
      correlation_id: r.correlation_id,
      attempts: Number(r.attempts),
      last_error: r.last_error,
      consumer: r.consumer,
      consumer_version: r.consumer_version,
      dead_at: r.dead_at === null ? null : new Date(Number(r.dead_at)).toISOString(),
      created_at: new Date(Number(r.created_at)).toISOString(),
    }));
  }

  /**
   * Dead rows (these, or `all`) back to the relay with fresh attempts; the events go out again to every
   * subscriber that has not handled them (inbox). Returns the rows moved; a row that is not dead is left.
   */
  async replayOutbox(ids: readonly number[] | 'all'): Promise<{ id: number; event_id: string }[]> {
    if (ids !== 'all' && ids.length === 0) return [];
    const rows = await this.db.query<{ id: number | string; event_id: string }>(
      q.replayDeadOutbox(ids, this.now()),
    );
    for (const fn of this.listeners) fn();
    return rows.map((r) => ({ id: Number(r.id), event_id: r.event_id }));
  }
}

/** The envelope fields the `events` row repeats as columns (for indexes and filters). */
export function eventColumns(env: Envelope): q.EventColumns {
  return {
    eventId: env.event_id,
    type: env.type,
    occurredAt: env.occurred_at,
    tenantId: env.tenant_id,
    correlationId: env.correlation_id,
    causationId: env.causation_id,
    taskId: env.execution.task_id,
    sessionId: env.execution.session_id,
  };
}

/** Outbox rows on `topic` for `envelopes`, in their order, ENQUEUE_CHUNK per statement. */
async function queueOn(topic: string, envelopes: readonly Envelope[], db: Db, now: number): Promise<void> {
  for (let i = 0; i < envelopes.length; i += ENQUEUE_CHUNK) {
    const rows = envelopes
      .slice(i, i + ENQUEUE_CHUNK)
      .map((e) => ({ eventId: e.event_id, correlationId: e.correlation_id }));
    await db.query(q.insertOutboxMany(rows, topic, now));
  }
}
