import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { type Envelope, toCloudEvent } from '../envelope/index.js';
import type { NatsConfig } from './config.js';

/** A first connection that takes longer is a NATS that is down: the row waits for the next try. */
export const CONNECT_TIMEOUT_MS = 2000;
/** A PubAck later than this counts as a failure; the retry carries the same `Nats-Msg-Id`. */
export const PUBLISH_TIMEOUT_MS = 5000;
/**
 * A stream we create keeps events for seven days, in files, oldest dropped first: long enough for a
 * consumer down over a weekend to catch up, short enough that the stream does not become a second
 * copy of the log (the log is the record; the stream is a feed). docs/scale.md#nats-jetstream.
 */
export const STREAM_MAX_AGE_MS = 7 * 24 * 3600_000;
/** The server default, written out: a retry within two minutes of a lost PubAck is dropped as a duplicate. */
export const DUPLICATE_WINDOW_MS = 2 * 60_000;
/** CloudEvents' JSON event format (structured mode). */
export const CLOUDEVENTS_JSON = 'application/cloudevents+json';

const NS_PER_MS = 1_000_000;

/**
 * The structured-mode CloudEvent of `envelope` as JSON. With `body` (the envelope as stored: its
 * canonical JSON) only the attributes are serialized and `body` goes in as `data` as it is: the same
 * JSON value as `JSON.stringify(toCloudEvent(envelope))`, without serializing the envelope a second
 * time (test: src/nats/nats.test.ts "builds the same CloudEvent").
 */
export function cloudEventJson(envelope: Envelope, gatewayUri: string, body?: string): string {
  const event = toCloudEvent(envelope, gatewayUri);
  if (body === undefined) return JSON.stringify(event);
  const { data: _, ...attributes } = event;
  return `${JSON.stringify(attributes).slice(0, -1)},"data":${body}}`;
}

interface Link {
  nc: NatsConnection;
  js: JetStreamClient;
  headers: typeof import('@nats-io/transport-node').headers;
  /** False between a `disconnect` status and the next `reconnect`: publishes fail at once then. */
  up: boolean;
}

/**
 * One connection to NATS, made on the first publish and remade after it closes, and the stream made
 * once per connection when missing. Every failure is thrown to the relay, which keeps the row and
 * tries again (the outbox is the buffer), and is remembered for `/readyz`'s `degraded`.
 */
export class NatsPublisher {
  private link: Link | undefined;
  private connecting: Promise<Link> | undefined;
  private problem: string | undefined;
  private stopped = false;
  private published = 0;

  constructor(
    private readonly cfg: NatsConfig,
    private readonly opts: { gatewayUri: string; credentials?: string; logger?: Logger },
  ) {}

  /** Why publishing does not work right now (undefined once a publish succeeded since the last failure). */
  degraded(): string | undefined {
    return this.problem;
  }

  /** Events this process has had acknowledged by the stream (duplicates included). */
  count(): number {
    return this.published;
  }

  subject(type: string): string {
    return `${this.cfg.subject_prefix}.${type}`;
  }

  /**
   * Publishes `env` and awaits its PubAck. `body`, when given, is the event as stored (its canonical
   * JSON, `Subscriber.handle`'s `body`): it goes into the CloudEvent as it is (`cloudEventJson`).
   */
  async publish(env: Envelope, body?: string): Promise<void> {
    try {
      // The open connection is used without a turn through `connect` (a promise per event otherwise).
      const open =
        this.link !== undefined && !this.stopped && !this.link.nc.isClosed() ? this.link : undefined;
      const link = open ?? (await this.connect());
      if (!link.up) throw new Error('the connection is down; the client is reconnecting');
      const h = link.headers();
      h.set('Content-Type', CLOUDEVENTS_JSON);
      await link.js.publish(this.subject(env.type), cloudEventJson(env, this.opts.gatewayUri, body), {
        msgID: env.event_id,
        headers: h,
        timeout: PUBLISH_TIMEOUT_MS,
      });
      this.published++;
      this.problem = undefined;
    } catch (err) {
      const message = `publishing to NATS at ${this.where()} failed (${(err as Error)?.message ?? err}); events wait in the outbox and go out when it is back`;
      if (this.problem === undefined) this.opts.logger?.warn({ err: String(err) }, message);
      this.problem = message;
      throw new Error(message);
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    const link = this.link ?? (await this.connecting?.catch(() => undefined));
    this.link = undefined;
    await link?.nc.close().catch(() => {});
  }

  /** The servers without user info (a URL may carry a password). */
  private where(): string {
    return this.cfg.url.replace(/\/\/[^@/]*@/g, '//');
  }

  private async connect(): Promise<Link> {
    if (this.stopped) throw new Error('the NATS publisher is stopped');
    if (this.link && !this.link.nc.isClosed()) return this.link;
    this.link = undefined;
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<Link> {
    const { connect, credsAuthenticator, headers, tokenAuthenticator } = await import(
      '@nats-io/transport-node'
    );
    const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
    const secret = this.opts.credentials;
    const nc = await connect({
      servers: this.cfg.url.split(',').map((s) => s.trim()),
      name: 'switchboard',
      timeout: CONNECT_TIMEOUT_MS,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Without it the client builds two or three Errors (stack traces) per publish, a quarter of the
      // relay's CPU per event (bench nats); our own error says what failed and where.
      noAsyncTraces: true,
      ...(secret === undefined
        ? {}
        : {
            authenticator: secret.includes('BEGIN NATS USER JWT')
              ? credsAuthenticator(new TextEncoder().encode(secret))
              : tokenAuthenticator(secret),
          }),
    });
    try {
      await this.ensureStream(await jetstreamManager(nc));
    } catch (err) {
      await nc.close().catch(() => {});
      throw err;
    }
    const link: Link = { nc, js: jetstream(nc), headers, up: true };
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') link.up = false;
        else if (s.type === 'reconnect') link.up = true;
      }
    })().catch(() => {});
    if (this.stopped) {
      await nc.close().catch(() => {});
      throw new Error('the NATS publisher is stopped');
    }
    this.link = link;
    return link;
  }

  /** Creates the stream when missing; one that exists is used as it is (its owner chose its limits). */
  private async ensureStream(jsm: Awaited<ReturnType<typeof import('@nats-io/jetstream').jetstreamManager>>) {
    const { RetentionPolicy, StorageType, DiscardPolicy, JetStreamApiCodes, JetStreamApiError } =
      await import('@nats-io/jetstream');
    try {
      await jsm.streams.info(this.cfg.stream);
      return;
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
    }
    await jsm.streams.add({
      name: this.cfg.stream,
      subjects: [`${this.cfg.subject_prefix}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: STREAM_MAX_AGE_MS * NS_PER_MS,
      duplicate_window: DUPLICATE_WINDOW_MS * NS_PER_MS,
    });
    this.opts.logger?.info({ stream: this.cfg.stream }, 'created the NATS JetStream stream');
  }
}
