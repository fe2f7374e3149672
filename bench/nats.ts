import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { type Envelope, toCloudEvent } from '../src/envelope/index.js';
import { EventLog } from '../src/log/log.js';
import { NATS_IN_FLIGHT, NATS_TOPIC, natsRelay } from '../src/nats/module.js';
import { CLOUDEVENTS_JSON, NatsPublisher } from '../src/nats/publisher.js';
import { appMigrations } from '../src/server/modules.js';
import { migrate } from '../src/store/migrate.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { fmt, line } from './stats.js';

/**
 * Events/s into JetStream: Switchboard's path (each append also queues its events on the `nats` topic,
 * in the same transaction; the pipelined NATS relay claims the topic, reads the bodies in one query
 * per batch, builds the CloudEvents and publishes them, at most one per correlation in flight and up to
 * NATS_IN_FLIGHT in all, each PubAck awaited) beside the bare client publishing the same CloudEvents
 * with the same discipline (as many lanes, each correlation's messages one after another, each PubAck
 * awaited), in the same run, each into a fresh stream. Two figures for Switchboard: the relay over
 * committed events (a filled `nats` topic: the same work as the bare client's), and live, the events
 * appended while the relay runs, timed from the first append to the last PubAck (the appends' own
 * cost included). CPU per event is the process's (`process.cpuUsage`, the SQLite writer included), and
 * the load average is printed beside them.
 */

const URL = process.env.SWITCHBOARD_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const N = 3000;
const CORRELATIONS = 100;
/** The NATS relay's publishes in flight: the bare client gets as many lanes. */
const LANES = NATS_IN_FLIGHT;
const DEFAULTS = { tenant_id: 'bench', environment: 'bench' };

type Kind = 'live' | 'hop' | 'bare';

interface Run {
  rate: number;
  cpuUs: number;
}

const cpuSince = (c: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(c);
  return (d.user + d.system) / N;
};

export async function benchNats(): Promise<string[]> {
  const out = [`nats: events/s published to JetStream (${N} events over ${CORRELATIONS} correlations)`];
  const nc = await connect({ servers: URL, timeout: 2000 }).catch(() => undefined);
  if (!nc) return [...out, `  skipped: no NATS at ${URL}`];
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-nats-'));
  const streams: string[] = [];
  const fresh = async (tag: string) => {
    const id = `${tag}${Date.now().toString(36)}`;
    const stream = `SB_BENCH_${id}`;
    streams.push(stream);
    return { stream, prefix: `sbbench.${id}` };
  };
  const load0 = loadavg()[0]!;
  try {
    const runs: Record<Kind, Run>[] = [];
    for (let round = 0; round < 3; round++) {
      const store = async (name: string) => {
        const db = new SqliteDb({ path: join(dir, `${name}${round}.db`), synchronous: 'normal' });
        await migrate(db, appMigrations());
        const log = new EventLog(db, DEFAULTS);
        log.alsoQueue(NATS_TOPIC); // as the nats module's outboxTopics does
        return { db, log };
      };
      const appendAll = async (log: EventLog) => {
        const envs: Envelope[] = [];
        for (let i = 0; i < N; i += 100) {
          envs.push(
            ...(await log.appendMany(
              Array.from({ length: 100 }, (_, j) => ({
                type: 'agent.tool.requested' as const,
                correlation_id: `c${(i + j) % CORRELATIONS}`,
                subject: { tool: 'Bash', action: 'exec', resource_ref: 'repo://x' },
                redacted_summary: { cwd: 'project', tool: 'Bash', i: i + j },
              })),
            )),
          );
        }
        return envs;
      };
      // Published first by each publisher: it connects and makes the stream outside the timing.
      const first = await store('sample');
      const sample = await first.log.append({
        type: 'agent.tool.requested',
        correlation_id: 'sample',
        subject: { tool: 'Bash', action: 'exec', resource_ref: 'repo://x' },
      });
      await first.db.close();
      const publisherFor = async (first: Envelope) => {
        const s = await fresh('r');
        const publisher = new NatsPublisher(
          { url: URL, stream: s.stream, subject_prefix: s.prefix },
          { gatewayUri: 'urn:switchboard' },
        );
        await publisher.publish(first);
        return publisher;
      };
      const published = async (publisher: NatsPublisher) => {
        while (publisher.count() < N + 1) await new Promise((r) => setTimeout(r, 5));
      };

      // Live: the relay runs while the events are appended; timed from the first append to the last PubAck.
      const a = await store('live');
      const pa = await publisherFor(sample);
      const natsA = natsRelay(a.db, a.log, pa);
      natsA.start();
      let t0 = performance.now();
      let c0 = process.cpuUsage();
      const envs = await appendAll(a.log);
      await published(pa);
      const live = { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
      await natsA.stop();
      await pa.close();
      await a.db.close();

      // Committed events: the appends fill the `nats` topic first, untimed; then the relay alone.
      const b = await store('hop');
      await appendAll(b.log);
      // The bus rows are gone in a running gateway (its bus relay hands them over as they commit);
      // left pending here, they would double the outbox the NATS claim works beside.
      await b.db.query({ text: "DELETE FROM outbox WHERE topic = 'bus'" });
      const pb = await publisherFor(sample);
      const natsB = natsRelay(b.db, b.log, pb);
      t0 = performance.now();
      c0 = process.cpuUsage();
      natsB.start();
      await published(pb);
      const hop = { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
      await natsB.stop();
      await pb.close();
      await b.db.close();

      // Bare: the same CloudEvents, the same order per correlation, as many lanes.
      const bs = await fresh('b');
      await jsm.streams.add({ name: bs.stream, subjects: [`${bs.prefix}.>`] });
      const byCorrelation = new Map<string, Envelope[]>();
      for (const e of envs)
        byCorrelation.set(e.correlation_id, [...(byCorrelation.get(e.correlation_id) ?? []), e]);
      const queues = [...byCorrelation.values()];
      t0 = performance.now();
      c0 = process.cpuUsage();
      let next = 0;
      const lane = async () => {
        while (next < queues.length) {
          for (const e of queues[next++]!) {
            const h = headers();
            h.set('Content-Type', CLOUDEVENTS_JSON);
            await js.publish(`${bs.prefix}.${e.type}`, JSON.stringify(toCloudEvent(e)), {
              msgID: e.event_id,
              headers: h,
            });
          }
        }
      };
      await Promise.all(Array.from({ length: LANES }, lane));
      const bare = { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
      runs.push({ live, hop, bare });
    }
    const best = (k: Kind) => runs.map((r) => r[k]).reduce((x, y) => (y.rate > x.rate ? y : x));
    const bare = best('bare');
    const load = `load average ${fmt(load0, 1)} → ${fmt(loadavg()[0]!, 1)}`;
    out.push(
      line(
        `bare client (${LANES} lanes, PubAck awaited)`,
        `${fmt(bare.rate)} /s`,
        `best of 3; ${fmt(bare.cpuUs)} µs CPU per event; ${load}`,
      ),
    );
    for (const [k, label] of [
      ['hop', 'committed events → JetStream (relay over the `nats` topic)'],
      ['live', 'live: appended while the relay runs (append → PubAck)'],
    ] as const) {
      const r = best(k);
      out.push(
        line(
          label,
          `${fmt(r.rate)} /s`,
          `best of 3; ${fmt(r.rate / bare.rate, 2)}x the bare client (goal >= 0.8x); ${fmt(r.cpuUs)} µs CPU per event`,
        ),
      );
    }
    return out;
  } finally {
    for (const s of streams) await jsm.streams.delete(s).catch(() => {});
    await nc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
