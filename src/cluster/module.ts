import { hostname } from 'node:os';
import { newId } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { startWorker, type Worker } from '../kernel/worker.js';
import type { Db } from '../store/port.js';
import { one } from '../store/port.js';
import { Bus } from './bus.js';
import { clusterConfigSchema, FORGET_AFTER_MS } from './config.js';
import { Election } from './election.js';
import { type ClusterService, type ClusterView, clusterPort } from './port.js';
import * as q from './sql.js';

const sections = { cluster: clusterConfigSchema.prefault({}) };
type ClusterDeps = Deps<Record<never, never>, typeof sections>;

export interface ClusterModuleOptions {
  /** Default true. Tests drive `beat()` themselves. */
  heartbeat?: boolean;
}

export interface ClusterModule extends Module<Record<never, never>, typeof sections> {
  /** The running election (after `start`), for tests. */
  election(): Election | undefined;
}

/** Terms and replicas `GET /v1/cluster` lists at most. */
const VIEW_LIMIT = 50;

/**
 * Replicas on one store (issue 19 point 1): each process records a heartbeat, one holds the leader's
 * lease with a fencing token, and singletons ask `clusterPort.isLeader()`; `broadcast`/`listen` wake
 * other replicas (PostgreSQL LISTEN/NOTIFY). `GET /v1/cluster` (admin) shows it. docs/scale.md.
 */
export function clusterModule(opts: ClusterModuleOptions = {}): ClusterModule {
  let election: Election | undefined;
  let bus: Bus | undefined;
  let worker: Worker | undefined;
  let service: ClusterService | undefined;

  return {
    ...defineModule({
      name: 'cluster',
      config: sections,
      provides: [clusterPort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    election: () => election,
    routes(app, s) {
      app.get('/v1/cluster', requireRole(s.keys, 'admin'), async (c) => {
        if (!service) throw new AppError('not_ready', 'the cluster module has not started');
        return c.json(await service.view());
      });
    },
    async start(s: ClusterDeps) {
      const cfg = s.config.cluster;
      const pid = process.pid;
      const replica = {
        id: newId('replica', s.now()),
        name: cfg.replica_name ?? `${hostname()}:${pid}`,
        host: hostname(),
        pid,
      };
      const e = new Election({
        db: s.db,
        replica,
        heartbeatMs: cfg.heartbeat_ms,
        leaseMs: cfg.lease_ms,
        forgetAfterMs: FORGET_AFTER_MS,
        logger: s.logger,
      });
      const b = new Bus(s.db, s.logger);
      election = e;
      bus = b;
      // The first heartbeat before anything else starts: a lone replica leads from its first tick on.
      await e.beat().catch((err: unknown) => s.logger.warn({ err }, 'cluster: first heartbeat failed'));
      await b.connect().catch((err: unknown) => s.logger.warn({ err }, 'cluster: LISTEN failed; retrying'));
      service = clusterService(s.db, e, b, cfg);
      s.provide(clusterPort, service);
      if (opts.heartbeat !== false) {
        let beats = 0;
        worker = startWorker(
          {
            name: 'cluster.heartbeat',
            intervalMs: cfg.heartbeat_ms,
            backoff: { minMs: cfg.heartbeat_ms, maxMs: cfg.heartbeat_ms, factor: 1 },
            tick: async () => {
              try {
                await e.beat();
              } finally {
                // A heartbeat that failed still ends a lease that ran out, and says so.
                e.settle();
              }
              await b.connect();
              if (++beats % 600 === 0) await e.prune();
            },
            onError: (err) => s.logger.warn({ err }, 'cluster: heartbeat failed'),
          },
          s.logger,
        );
      }
    },
    async stop() {
      await worker?.stop();
      worker = undefined;
      await election?.resign().catch(() => {});
      await bus?.close();
    },
  };
}

function clusterService(
  db: Db,
  e: Election,
  b: Bus,
  cfg: { heartbeat_ms: number; lease_ms: number },
): ClusterService {
  return {
    replicaId: e.replicaId,
    isLeader: () => e.isLeader(),
    fencingToken: () => e.fencingToken(),
    onLeaderChange: (fn) => e.onLeaderChange(fn),
    fence: (tx) => e.fence(tx),
    broadcast: (on, topic, payload) => b.broadcast(on, topic, payload),
    listen: (topic, fn) => b.listen(topic, fn),
    view: () => readView(db, e, cfg),
    deadReplicas: async () => {
      const now = Number((await one<{ now: number }>(db, q.selectNow(db.dialect)))!.now);
      const rows = await db.query<{ id: string; host: string; pid: number }>(
        q.selectDeadReplicas(now - cfg.lease_ms),
      );
      return rows.map((r) => ({ id: r.id, host: r.host, pid: Number(r.pid) }));
    },
  };
}

async function readView(
  db: Db,
  e: Election,
  cfg: { heartbeat_ms: number; lease_ms: number },
): Promise<ClusterView> {
  // This replica's own belief first: read after the lease, a heartbeat taking the lease in between
  // would show this replica leading beside the lease row it just replaced.
  const self = { id: e.replicaId, leader: e.isLeader(), fencing_token: e.fencingToken() ?? null };
  const now = Number((await one<{ now: number }>(db, q.selectNow(db.dialect)))!.now);
  const lease = await one<q.LeaseRow>(db, q.selectLease());
  const live = lease && Number(lease.expires_at) > now ? lease : undefined;
  const replicas = await db.query<q.ReplicaRow>(q.listReplicas(VIEW_LIMIT));
  const terms = await db.query<q.TermRow>(q.listTerms(VIEW_LIMIT));
  const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
  return {
    self,
    store: db.dialect,
    leader: live
      ? {
          replica_id: live.replica_id,
          fencing_token: Number(live.token),
          acquired_at: iso(live.acquired_at),
          expires_at: iso(live.expires_at),
        }
      : null,
    replicas: replicas.map((r) => ({
      id: r.id,
      name: r.name,
      host: r.host,
      pid: Number(r.pid),
      started_at: iso(r.started_at),
      last_heartbeat_at: iso(r.heartbeat_at),
      stopped_at: r.stopped_at === null ? null : iso(r.stopped_at),
      alive: r.stopped_at === null && Number(r.heartbeat_at) > now - cfg.lease_ms,
      leader: live?.replica_id === r.id,
    })),
    terms: terms.map((t) => ({
      fencing_token: Number(t.token),
      replica_id: t.replica_id,
      acquired_at: iso(t.acquired_at),
    })),
    heartbeat_ms: cfg.heartbeat_ms,
    lease_ms: cfg.lease_ms,
  };
}
