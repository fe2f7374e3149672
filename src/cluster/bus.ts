import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../store/port.js';
import { one } from '../store/port.js';
import { PostgresDb, pgDriver } from '../store/postgres.js';
import { RESYNC } from './port.js';
import * as q from './sql.js';

/** PostgreSQL's limit on a channel name (NAMEDATALEN - 1). */
const MAX_CHANNEL = 63;

/**
 * Wake-ups between replicas: `broadcast` runs `pg_notify` in the caller's transaction (PostgreSQL
 * delivers it at commit, never for a rollback); one dedicated connection per replica LISTENs and hands
 * each notification to the topic's listeners. One channel per schema, so suites (or tenants) sharing a
 * database never wake each other. A notification is a hint to re-read the store, never the data: when
 * the listening connection is lost, every listener gets `'*'` once it is back.
 *
 * On SQLite (one process) a broadcast is delivered in process after the commit.
 */
export class Bus {
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private client: pg.Client | undefined;
  private channel: string | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  /** Set once the listening connection was lost: the next connect tells every listener to re-read. */
  private wasLost = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Whether notifications from other replicas arrive now (always on SQLite: there are none). */
  get listening(): boolean {
    return !(this.db instanceof PostgresDb) || this.client !== undefined;
  }

  /** Connects the listening client; called at start and after a loss (each heartbeat). */
  async connect(): Promise<void> {
    if (this.closed || !(this.db instanceof PostgresDb) || this.client) return;
    this.connecting ??= this.open(this.db).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(db: PostgresDb): Promise<void> {
    this.channel ??= channelFor(String((await one<{ schema: string }>(db, q.currentSchema()))!.schema));
    const opts = db.pool.options;
    const client = new (pgDriver().Client)({
      connectionString: opts.connectionString,
      ...(opts.options ? { options: opts.options } : {}),
      connectionTimeoutMillis: 5_000,
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      if (n.channel === this.channel && n.payload) this.dispatch(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    const again = this.client === undefined && this.wasLost;
    this.client = client;
    // Whatever was broadcast while nobody listened is read again by the waiters themselves.
    if (again) for (const topic of this.listeners.keys()) this.deliver(topic, RESYNC);
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.wasLost = true;
    if (!this.closed) this.logger.warn({ err }, 'cluster: the LISTEN connection was lost; reconnecting');
    client.end().catch(() => {});
  }

  async broadcast(db: Db, topic: string, payload: string): Promise<void> {
    const message = `${topic}:${payload}`;
    if (db.dialect === 'postgres') {
      this.channel ??= channelFor(String((await one<{ schema: string }>(db, q.currentSchema()))!.schema));
      await db.query(q.notify(this.channel, message));
      return;
    }
    db.afterCommit(() => this.dispatch(message));
  }

  listen(topic: string, fn: (payload: string) => void): () => void {
    const set = this.listeners.get(topic) ?? new Set();
    this.listeners.set(topic, set);
    set.add(fn);
    return () => set.delete(fn);
  }

  private dispatch(message: string): void {
    const at = message.indexOf(':');
    if (at < 0) return;
    this.deliver(message.slice(0, at), message.slice(at + 1));
  }

  private deliver(topic: string, payload: string): void {
    for (const fn of [...(this.listeners.get(topic) ?? [])]) {
      try {
        fn(payload);
      } catch (err) {
        this.logger.error({ err, topic }, 'cluster: a broadcast listener failed');
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
    }
  }
}

/** `switchboard:<schema>`, or a digest of it when that is longer than PostgreSQL allows. */
export function channelFor(schema: string): string {
  const plain = `switchboard:${schema}`;
  if (Buffer.byteLength(plain) <= MAX_CHANNEL && !plain.includes('"')) return plain;
  return `switchboard:${createHash('sha256').update(schema).digest('hex').slice(0, 40)}`;
}
