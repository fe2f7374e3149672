import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { type Envelope, toCloudEvent } from '../src/envelope/index.js';
import { startWorker } from '../src/kernel/worker.js';
import { EventLog } from '../src/log/log.js';
import { Relay } from '../src/log/relay.js';
import { NATS_IN_FLIGHT, natsQueue, natsRelay } from '../src/nats/module.js';
import { CLOUDEVENTS_JSON, NatsPublisher } from '../src/nats/publisher.js';
import { appMigrations } from '../src/server/modules.js';
import { migrate } from '../src/store/migrate.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { fmt, line } from './stats.js';

/**
 * Events/s into JetStream: Switchboard's path (the bus relay, pipelined as the app's, queues each committed event on the `nats`
 * topic, the pipelined NATS relay claims the topic, reads the bodies in one query per batch, builds the
 * CloudEvents and publishes them, at most one per correlation in flight and up to NATS_IN_FLIGHT in
 * all, each PubAck awaited) beside the bare client publishing the same CloudEvents with the same
 * discipline (as many lanes, each correlation's messages one after another, each PubAck awaited), in
 * the same run, each into a fresh stream. Two figures for Switchboard: both hops from a filled bus
 * outbox, and the NATS hop alone from a filled `nats` topic. CPU per event is the process's
 * (`process.cpuUsage`, the SQLite writer included), and the load average is printed beside them.
 */

const URL = process.env.SWITCHBOARD_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const N = 3000;
const CORRELATIONS = 100;
/** The NATS relay's publishes in flight: the bare client gets as many lanes. */
const LANES = NATS_IN_FLIGHT;
const DEFAULTS = { tenant_id: 'bench', environment: 'bench' };

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
    const runs: { both: Run; hop: Run; bare: Run }[] = [];
    for (let round = 0; round < 3; round++) {
      const filled = async (name: string) => {
        const db = new SqliteDb({ path: join(dir, `${name}${round}.db`), synchronous: 'normal' });
        await migrate(db, appMigrations());
        const log = new EventLog(db, DEFAULTS);
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
        return { db, log, envs };
      };
      const publisherFor = async (envs: Envelope[]) => {
        const s = await fresh('r');
        const publisher = new NatsPublisher(
          { url: URL, stream: s.stream, subject_prefix: s.prefix },
          { gatewayUri: 'urn:switchboard' },
        );
        await publisher.publish(envs[0]!); // connects and makes the stream outside the timing
        return publisher;
      };
      const published = async (publisher: NatsPublisher) => {
        while (publisher.count() < N + 1) await new Promise((r) => setTimeout(r, 5));
      };

      // Both hops: the bus relay and the NATS relay started on the filled bus outbox; timed until the last PubAck.
      const a = await filled('both');
      const pa = await publisherFor(a.envs);
      const busA = new Relay(a.db, a.log, { pipeline: true, run: (loop) => startWorker(loop) });
      busA.subscribe(natsQueue(a.log));
      const natsA = natsRelay(a.db, a.log, pa);
      let t0 = performance.now();
      let c0 = process.cpuUsage();
      busA.start();
      natsA.start();
      await published(pa);
      const both = { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
      await busA.stop();
      await natsA.stop();
      await pa.close();
      await a.db.close();

      // The NATS hop alone: the bus relay fills the `nats` topic first, untimed.
      const b = await filled('hop');
      const busB = new Relay(b.db, b.log, { pipeline: true, run: (loop) => startWorker(loop) });
      busB.subscribe(natsQueue(b.log));
      await busB.drain();
      const pb = await publisherFor(b.envs);
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
      for (const e of a.envs)
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
      runs.push({ both, hop, bare });
    }
    const best = (k: 'both' | 'hop' | 'bare') =>
      runs.map((r) => r[k]).reduce((x, y) => (y.rate > x.rate ? y : x));
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
      ['hop', 'NATS relay alone (filled `nats` topic)'],
      ['both', 'both hops (filled bus outbox)'],
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
