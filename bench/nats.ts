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
 * committed events (a filled `nats` topic: the same work as the bare client's, the same messages), and
 * live, the events appended while the relay runs, timed from the first append to the last PubAck (the
 * appends' own cost included). CPU per event is the process's (`process.cpuUsage`, the SQLite writer
 * included), and the load average is printed beside them.
 *
 * Steadiness: ROUNDS rounds, each running every kind once in an order rotated from round to round (so
 * no side always runs first, on a colder JIT or a quieter NATS), and the figures are medians over the
 * rounds; the ratio is the median of the rounds' own ratios (hop and bare of one round ran seconds
 * apart), with its range. The bare client connects with the client's defaults, as it always did; a
 * second line shows it with `noAsyncTraces`, the connection option the publisher sets, so the share
 * of the ratio that option makes is visible.
 */

const URL = process.env.SWITCHBOARD_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const N = 3000;
const CORRELATIONS = 100;
const ROUNDS = 5;
/** The NATS relay's publishes in flight: the bare client gets as many lanes. */
const LANES = NATS_IN_FLIGHT;
const DEFAULTS = { tenant_id: 'bench', environment: 'bench' };

const KINDS = ['hop', 'bare', 'live', 'tuned'] as const;
type Kind = (typeof KINDS)[number];

interface Run {
  rate: number;
  cpuUs: number;
}

const cpuSince = (c: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(c);
  return (d.user + d.system) / N;
};

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/**
 * The relay's publisher, saying when the PubAck of its last event (the sample's and N more) is in: the
 * clock stops there, as the bare client's stops at its last PubAck (a poll would add its period, and a
 * timer's lateness under load, to one side only).
 */
class CountingPublisher extends NatsPublisher {
  private resolveAll: () => void = () => {};
  readonly all = new Promise<void>((r) => (this.resolveAll = r));
  override async publish(env: Envelope, body?: string): Promise<void> {
    await super.publish(env, body);
    if (this.count() >= N + 1) this.resolveAll();
  }
}

export async function benchNats(): Promise<string[]> {
  const out = [`nats: events/s published to JetStream (${N} events over ${CORRELATIONS} correlations)`];
  const nc = await connect({ servers: URL, timeout: 2000 }).catch(() => undefined);
  if (!nc) return [...out, `  skipped: no NATS at ${URL}`];
  const tunedNc = await connect({ servers: URL, timeout: 2000, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-nats-'));
  const streams: string[] = [];
  const fresh = async (tag: string) => {
    const id = `${tag}${Date.now().toString(36)}${streams.length}`;
    const stream = `SB_BENCH_${id}`;
    streams.push(stream);
    return { stream, prefix: `sbbench.${id}` };
  };
  const load0 = loadavg()[0]!;
  try {
    const runs: Record<Kind, Run>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
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
        const publisher = new CountingPublisher(
          { url: URL, stream: s.stream, subject_prefix: s.prefix },
          { gatewayUri: 'urn:switchboard' },
        );
        await publisher.publish(first);
        return publisher;
      };

      // Committed events: the appends fill the `nats` topic first, untimed; the relay runs in its turn.
      const b = await store('hop');
      const envs = await appendAll(b.log);
      // The bus rows are gone in a running gateway (its bus relay hands them over as they commit);
      // left pending here, they would double the outbox the NATS claim works beside.
      await b.db.query({ text: "DELETE FROM outbox WHERE topic = 'bus'" });
      const byCorrelation = new Map<string, Envelope[]>();
      for (const e of envs)
        byCorrelation.set(e.correlation_id, [...(byCorrelation.get(e.correlation_id) ?? []), e]);
      const queues = [...byCorrelation.values()];

      const measure: Record<Kind, () => Promise<Run>> = {
        // Live: the relay runs while the events are appended; timed from the first append to the last PubAck.
        live: async () => {
          const a = await store('live');
          const pa = await publisherFor(sample);
          const natsA = natsRelay(a.db, a.log, pa);
          natsA.start();
          const t0 = performance.now();
          const c0 = process.cpuUsage();
          await appendAll(a.log);
          await pa.all;
          const run = { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
          await natsA.stop();
          await pa.close();
          await a.db.close();
          return run;
        },
        hop: async () => {
          const pb = await publisherFor(sample);
          const natsB = natsRelay(b.db, b.log, pb);
          const t0 = performance.now();
          const c0 = process.cpuUsage();
          natsB.start();
          await pb.all;
          const run = { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
          await natsB.stop();
          await pb.close();
          return run;
        },
        // Bare: the same CloudEvents of the same events, the same order per correlation, as many lanes.
        bare: () => bare(nc),
        tuned: () => bare(tunedNc),
      };
      const bare = async (conn: typeof nc): Promise<Run> => {
        const js = jetstream(conn);
        const bs = await fresh('b');
        await jsm.streams.add({ name: bs.stream, subjects: [`${bs.prefix}.>`] });
        const t0 = performance.now();
        const c0 = process.cpuUsage();
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
        return { rate: N / ((performance.now() - t0) / 1000), cpuUs: cpuSince(c0) };
      };
      const result = {} as Record<Kind, Run>;
      for (let k = 0; k < KINDS.length; k++) {
        const kind = KINDS[(k + round) % KINDS.length]!;
        result[kind] = await measure[kind]();
      }
      await b.db.close();
      runs.push(result);
    }
    const mid = (k: Kind) => ({
      rate: median(runs.map((r) => r[k].rate)),
      cpuUs: median(runs.map((r) => r[k].cpuUs)),
    });
    const ratios = (k: Kind, base: Kind) => runs.map((r) => r[k].rate / r[base].rate);
    const ratioNote = (k: Kind, base: Kind) => {
      const rs = ratios(k, base);
      return `${fmt(median(rs), 2)}x (rounds ${fmt(Math.min(...rs), 2)}-${fmt(Math.max(...rs), 2)})`;
    };
    const bareMid = mid('bare');
    const tunedMid = mid('tuned');
    const load = `load average ${fmt(load0, 1)} → ${fmt(loadavg()[0]!, 1)}`;
    out.push(
      line(
        `bare client (${LANES} lanes, PubAck awaited)`,
        `${fmt(bareMid.rate)} /s`,
        `median of ${ROUNDS}; ${fmt(bareMid.cpuUs)} µs CPU per event; ${load}`,
      ),
      line(
        'bare client, noAsyncTraces (the publisher’s option)',
        `${fmt(tunedMid.rate)} /s`,
        `median of ${ROUNDS}; ${fmt(tunedMid.cpuUs)} µs CPU per event; ${ratioNote('tuned', 'bare')} the bare client`,
      ),
    );
    for (const [k, label] of [
      ['hop', 'committed events → JetStream (relay over the `nats` topic)'],
      ['live', 'live: appended while the relay runs (append → PubAck)'],
    ] as const) {
      const r = mid(k);
      out.push(
        line(
          label,
          `${fmt(r.rate)} /s`,
          `median of ${ROUNDS}; ${ratioNote(k, 'bare')} the bare client (goal >= 0.8x), ${ratioNote(k, 'tuned')} the tuned one; ${fmt(r.cpuUs)} µs CPU per event`,
        ),
      );
    }
    return out;
  } finally {
    for (const s of streams) await jsm.streams.delete(s).catch(() => {});
    await tunedNc.close();
    await nc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
