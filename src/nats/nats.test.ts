import { randomBytes } from 'node:crypto';
import { type JsMsg, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../envelope/index.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { waitFor } from '../tasks/testing.js';
import { NATS_TOPIC, type natsModule } from './module.js';
import { freePort, NATS_URL, natsAvailable, PrivateNats } from './testing.js';

const UP = await natsAvailable();
const DIALECTS = await dialects();

interface Received {
  seq: number;
  subject: string;
  msgId: string | undefined;
  contentType: string | undefined;
  ce: Record<string, unknown> & { id: string; correlationid: string; data: Envelope };
}

/** Every message of the stream, through a real (ordered) JetStream consumer. */
async function readStream(nc: NatsConnection, stream: string): Promise<Received[]> {
  const jsm = await jetstreamManager(nc);
  const total = (await jsm.streams.info(stream)).state.messages;
  const out: Received[] = [];
  if (total === 0) return out;
  const consumer = await jetstream(nc).consumers.get(stream);
  while (out.length < total) {
    const batch = await consumer.fetch({ max_messages: total - out.length, expires: 2000 });
    for await (const m of batch as AsyncIterable<JsMsg>) {
      out.push({
        seq: m.seq,
        subject: m.subject,
        msgId: m.headers?.get('Nats-Msg-Id'),
        contentType: m.headers?.get('Content-Type'),
        ce: m.json(),
      });
    }
  }
  return out;
}

/** Waits until the stream holds every one of `sent` (besides events the app emitted by itself). */
async function arrived(nc: NatsConnection, stream: string, sent: Envelope[], timeoutMs = 10_000) {
  const ids = new Set<string>(sent.map((e) => e.event_id));
  await waitFor(async () => {
    if ((await streamCount(nc, stream)) < sent.length) return undefined;
    const got = (await readStream(nc, stream)).filter((r) => ids.has(r.ce.id));
    return new Set(got.map((r) => r.ce.id)).size === ids.size ? true : undefined;
  }, timeoutMs);
}

/** The stream's message count, 0 while it does not exist yet. */
async function streamCount(nc: NatsConnection, stream: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return jsm.streams.info(stream).then(
    (i) => i.state.messages,
    () => 0,
  );
}

const unique = () => randomBytes(4).toString('hex');

/** Three correlations of `per` events each, appended interleaved so order is a real question. */
async function emitInterleaved(t: TestApp, tag: string, per: number): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for (let i = 0; i < per; i++) {
    for (const c of ['a', 'b', 'c']) {
      out.push(
        await t.services.emit({
          type: 'agent.tool.requested',
          correlation_id: `${tag}-${c}`,
          redacted_summary: { i },
        }),
      );
    }
  }
  return out;
}

function checkOnceInOrder(received: Received[], sent: Envelope[]) {
  const mine = received.filter((r) => sent.some((e) => e.event_id === r.ce.id));
  expect(mine.map((r) => r.ce.id).sort()).toEqual(sent.map((e) => e.event_id).sort());
  for (const corr of new Set(sent.map((e) => e.correlation_id))) {
    expect(mine.filter((r) => r.ce.correlationid === corr).map((r) => r.ce.id)).toEqual(
      sent.filter((e) => e.correlation_id === corr).map((e) => e.event_id),
    );
  }
}

describe.skipIf(!UP).each(DIALECTS)('NATS JetStream publisher on %s', (dialect) => {
  let nc: NatsConnection;
  let t: TestApp | undefined;
  const streams: string[] = [];
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
  });
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
    const jsm = await jetstreamManager(nc);
    for (const s of streams.splice(0)) await jsm.streams.delete(s).catch(() => {});
  });
  afterAll(async () => {
    await nc?.close();
  });

  async function app(url: string) {
    const id = unique();
    const stream = `SB_TEST_${id}`;
    streams.push(stream);
    const prefix = `sbtest.${id}`;
    t = await testApp({
      dialect,
      config: { nats: { url, stream, subject_prefix: prefix } },
    });
    // As `serve` does: the bus relay runs (testApp leaves it to the test).
    t.services.relay.start();
    return { t, stream, prefix };
  }

  it('publishes each committed event once as a structured CloudEvent, in order per correlation, into a stream it created', async () => {
    const { t, stream, prefix } = await app(NATS_URL);
    const sent = await emitInterleaved(t, 'ord', 10);
    await arrived(nc, stream, sent);
    const received = await readStream(nc, stream);
    checkOnceInOrder(received, sent);
    const first = received.find((r) => r.ce.id === sent[0]!.event_id)!;
    expect(first.subject).toBe(`${prefix}.agent.tool.requested`);
    expect(first.msgId).toBe(sent[0]!.event_id);
    expect(first.contentType).toBe('application/cloudevents+json');
    expect(first.ce).toMatchObject({
      specversion: '1.0',
      id: sent[0]!.event_id,
      type: 'dev.switchboard.agent.tool.requested',
      time: sent[0]!.occurred_at,
      datacontenttype: 'application/json',
      correlationid: 'ord-a',
      tenantid: sent[0]!.tenant_id,
      data: { event_id: sent[0]!.event_id, redacted_summary: { i: 0 } },
    });
    expect(String(first.ce.source)).toMatch(/^urn:switchboard\//);
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    expect(info.config.subjects).toEqual([`${prefix}.>`]);
    expect(info.config.retention).toBe('limits');
    expect(info.config.max_age).toBe(7 * 24 * 3600 * 1e9);
    expect(info.config.duplicate_window).toBe(120 * 1e9);
    // Both outbox topics are drained: nothing waits.
    await waitFor(async () => ((await t.services.log.outboxDepth()) === 0 ? true : undefined));
  });

  it('drops a second publish of an event by its Nats-Msg-Id', async () => {
    const { t, stream } = await app(NATS_URL);
    const sent = await emitInterleaved(t, 'dup', 1);
    const e = sent[0];
    await arrived(nc, stream, sent);
    const before = await streamCount(nc, stream);
    // Queued again (a crash after the publish, before the outbox row was finished): published again.
    await t.services.log.enqueue([e!], NATS_TOPIC);
    const running = (
      t.kernel.modules.find((m) => m.name === 'nats') as ReturnType<typeof natsModule>
    ).running()!;
    await waitFor(() => (running.publisher.count() >= before + 1 ? true : undefined));
    await running.relay.drain();
    expect(await streamCount(nc, stream)).toBe(before);
    const again = await jetstream(nc).publish(
      (await readStream(nc, stream)).find((r) => r.ce.id === e!.event_id)!.subject,
      'replay',
      { msgID: e!.event_id },
    );
    expect(again.duplicate).toBe(true);
    expect(await streamCount(nc, stream)).toBe(before);
  });

  it('keeps events in the outbox while NATS is unreachable, stays ready (degraded), and loses nothing across a restart', async () => {
    const server = new PrivateNats(await freePort());
    try {
      // Nothing listens on the port yet: NATS is down from the start.
      const { t, stream } = await app(server.url);
      const early = await emitInterleaved(t, 'down', 3);
      await waitFor(async () => {
        const r = await t.app.request('/readyz');
        const body = (await r.json()) as { status: string; degraded?: string[] };
        return r.status === 200 && body.degraded?.some((d) => d.startsWith('nats: publishing to NATS'))
          ? body
          : undefined;
      });
      // The bus's other subscribers went on: only the `nats` topic waits, with every event in it.
      const ids = early.map((e) => e.event_id);
      const open = () =>
        t.services.db.query<{ topic: string; n: number }>({
          text: `SELECT topic, COUNT(*) AS n FROM outbox WHERE event_id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')}) GROUP BY topic`,
          values: ids,
        });
      await waitFor(async () => ((await open()).every((r) => r.topic === NATS_TOPIC) ? true : undefined));
      expect((await open()).map((r) => [r.topic, Number(r.n)])).toEqual([[NATS_TOPIC, 9]]);
      const dead = await t.services.db.query({ text: "SELECT id FROM outbox WHERE status = 'dead'" });
      expect(dead).toEqual([]);

      await server.start();
      const probe = await connect({ servers: server.url });
      try {
        await arrived(probe, stream, early, 20_000);
        await waitFor(async () => {
          const body = (await (await t.app.request('/readyz', { headers: auth('admin') })).json()) as {
            degraded?: string[];
          };
          return body.degraded === undefined ? true : undefined;
        });
      } finally {
        await probe.close();
      }

      // Stopped mid-run, events keep coming; restarted on the same store, it gets the rest.
      await server.stop();
      const late = await emitInterleaved(t, 'down', 4);
      await server.start();
      const again = await connect({ servers: server.url });
      try {
        const all = [...early, ...late];
        await arrived(again, stream, all, 20_000);
        checkOnceInOrder(await readStream(again, stream), all);
        expect(await streamCount(again, stream)).toBe(all.length + (await otherEvents(again, stream, all)));
      } finally {
        await again.close();
      }
    } finally {
      await t?.cleanup();
      t = undefined;
      await server.cleanup();
    }
  }, 60_000);
});

/** Events the app emitted by itself (not the test's): counted so the total check stays exact. */
async function otherEvents(nc: NatsConnection, stream: string, mine: Envelope[]): Promise<number> {
  const ids = new Set<string>(mine.map((e) => e.event_id));
  return (await readStream(nc, stream)).filter((r) => !ids.has(r.ce.id)).length;
}
