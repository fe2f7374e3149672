import { port } from '../kernel/port.js';
import type { WorkerSpec } from '../kernel/worker.js';
import type { Db } from '../store/port.js';

/** A replica as `GET /v1/cluster` shows it. */
export interface ReplicaView {
  id: string;
  name: string;
  host: string;
  pid: number;
  started_at: string;
  last_heartbeat_at: string;
  stopped_at: string | null;
  /** Heard from within one lease and not stopped. */
  alive: boolean;
  leader: boolean;
}

export interface ClusterView {
  /** The replica that answered. */
  self: { id: string; leader: boolean; fencing_token: number | null };
  store: 'sqlite' | 'postgres';
  leader: { replica_id: string; fencing_token: number; acquired_at: string; expires_at: string } | null;
  replicas: ReplicaView[];
  /** The latest terms, newest first: one holder per fencing token. */
  terms: { fencing_token: number; replica_id: string; acquired_at: string }[];
  heartbeat_ms: number;
  lease_ms: number;
}

/**
 * What modules with a singleton loop (the task supervisor, the digest flusher, retention, the sweeps)
 * and modules that must wake waiters on other replicas (approvals) use. Optional everywhere: without
 * it a module runs as if it were the only process, which on SQLite it is.
 */
export interface ClusterService {
  readonly replicaId: string;
  /** Whether this replica holds the lease now (measured against its own clock, inside the lease). */
  isLeader(): boolean;
  /** The token of the term this replica leads, or undefined when it does not lead. */
  fencingToken(): number | undefined;
  /** Told at each change of this replica's leadership; returns the unsubscribe. */
  onLeaderChange(fn: (leader: boolean, token: number | undefined) => void): () => void;
  /**
   * Inside a singleton's transaction: throws `NotLeaderError` unless this replica still holds its
   * term, and holds off a takeover until that transaction ends (PostgreSQL `FOR SHARE`).
   */
  fence(tx: Db): Promise<void>;
  /**
   * Tells every replica `topic` + `payload` once the transaction of `db` commits (PostgreSQL
   * `NOTIFY`; in process on SQLite). Ids only: a payload is no place for content.
   */
  broadcast(db: Db, topic: string, payload: string): Promise<void>;
  /**
   * Called for each broadcast of `topic` (this replica's too), and with `'*'` after the connection that
   * listens was lost and is back (notifications may have been missed: re-read everything).
   */
  listen(topic: string, fn: (payload: string) => void): () => void;
  view(): Promise<ClusterView>;
  /**
   * Replicas not heard from within one lease (the threshold `alive` uses in the view), or stopped:
   * whatever they were running has no process watching it any more. Their host and pid name the
   * gateway process a row recorded (tasks' `host` and `gateway_pid`).
   */
  deadReplicas(): Promise<{ id: string; host: string; pid: number }[]>;
}

export const clusterPort = port<ClusterService>('cluster');

/** The payload a listener gets when notifications may have been missed. */
export const RESYNC = '*';

export class NotLeaderError extends Error {
  constructor(replicaId: string) {
    super(
      `replica ${replicaId} no longer holds the leader's lease; the singleton's work is left to the leader`,
    );
    this.name = 'NotLeaderError';
  }
}

/**
 * A singleton's worker: the pass runs only on the leader; elsewhere it does nothing and sleeps its
 * interval. Without a cluster (a module used on its own) every pass runs. The port is read at each pass.
 */
export function leaderOnly(cluster: () => ClusterService | undefined, spec: WorkerSpec): WorkerSpec {
  return {
    ...spec,
    tick: async (signal) => {
      const c = cluster();
      return !c || c.isLeader() ? spec.tick(signal) : undefined;
    },
  };
}
