import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
 * Events/s into JetStream: Switchboard's path (the bus relay queues each committed event on the `nats`
 * topic, the NATS relay claims it, reads the event, builds the CloudEvent and publishes it awaiting
 * the PubAck, in order per correlation, up to NATS_IN_FLIGHT correlations side by side) beside the bare client
 * publishing the same CloudEvents with the same discipline (as many lanes, each correlation's messages one
 * after another, each PubAck awaited), in the same run, each into a fresh stream.
 */

const URL = process.env.SWITCHBOARD_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const N = 3000;
const CORRELATIONS = 100;
/** The NATS relay's publishes in flight: the bare client gets as many lanes. */
const LANES = NATS_IN_FLIGHT;
const DEFAULTS = { tenant_id: 'bench', environment: 'bench' };

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
  try {
    const runs: { relay: number; bare: number }[] = [];
    for (let round = 0; round < 3; round++) {
      const db = new SqliteDb({ path: join(dir, `r${round}.db`), synchronous: 'normal' });
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

      // Switchboard: both relays started on the filled outbox; timed until the last PubAck.
      const s = await fresh('r');
      const publisher = new NatsPublisher(
        { url: URL, stream: s.stream, subject_prefix: s.prefix },
        { gatewayUri: 'urn:switchboard' },
      );
      await publisher.publish(envs[0]!); // connects and makes the stream outside the timing
      const bus = new Relay(db, log, { run: (loop) => startWorker(loop) });
      bus.subscribe(natsQueue(log));
      const nats = natsRelay(db, log, publisher);
      const t0 = performance.now();
      bus.start();
      nats.start();
      while (publisher.count() < N + 1) await new Promise((r) => setTimeout(r, 5));
      const relayRate = N / ((performance.now() - t0) / 1000);
      await bus.stop();
      await nats.stop();
      await publisher.close();
      await db.close();

      // Bare: the same CloudEvents, the same order per correlation, as many lanes.
      const b = await fresh('b');
      await jsm.streams.add({ name: b.stream, subjects: [`${b.prefix}.>`] });
      const byCorrelation = new Map<string, Envelope[]>();
      for (const e of envs)
        byCorrelation.set(e.correlation_id, [...(byCorrelation.get(e.correlation_id) ?? []), e]);
      const queues = [...byCorrelation.values()];
      const t1 = performance.now();
      let next = 0;
      const lane = async () => {
        while (next < queues.length) {
          for (const e of queues[next++]!) {
            const h = headers();
            h.set('Content-Type', CLOUDEVENTS_JSON);
            await js.publish(`${b.prefix}.${e.type}`, JSON.stringify(toCloudEvent(e)), {
              msgID: e.event_id,
              headers: h,
            });
          }
        }
      };
      await Promise.all(Array.from({ length: LANES }, lane));
      const bareRate = N / ((performance.now() - t1) / 1000);
      runs.push({ relay: relayRate, bare: bareRate });
    }
    const relay = Math.max(...runs.map((r) => r.relay));
    const bare = Math.max(...runs.map((r) => r.bare));
    out.push(line(`bare client (${LANES} lanes, PubAck awaited)`, `${fmt(bare)} /s`, 'best of 3'));
    out.push(
      line(
        'through the outbox and relays',
        `${fmt(relay)} /s`,
        `best of 3; ${fmt(relay / bare, 2)}x the bare client (goal >= 0.8x)`,
      ),
    );
    return out;
  } finally {
    for (const s of streams) await jsm.streams.delete(s).catch(() => {});
    await nc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
