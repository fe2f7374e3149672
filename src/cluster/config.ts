import { z } from 'zod';

/** How often a replica says it is alive and the leader renews its lease. */
export const HEARTBEAT_MS = 1_000;
/**
 * How long a lease lasts without renewal: the longest a dead leader's singletons stay without a
 * leader (a clean stop hands the lease back at once). Five heartbeats, so a slow store or a GC pause
 * of a few seconds does not move leadership back and forth.
 */
export const LEASE_MS = 5_000;
/** Replicas not heard from for a day are dropped from `cluster_replicas` (a restart is a new replica). */
export const FORGET_AFTER_MS = 24 * 3_600_000;

/** The `cluster:` config section (docs/scale.md, "Replicas"). */
export const clusterConfigSchema = z
  .strictObject({
    /** Shown in `GET /v1/cluster`; default `<hostname>:<pid>`. */
    replica_name: z.string().min(1).max(200).optional(),
    heartbeat_ms: z.number().int().min(50).max(60_000).default(HEARTBEAT_MS),
    lease_ms: z.number().int().min(200).max(600_000).default(LEASE_MS),
  })
  .refine((c) => c.lease_ms >= 2 * c.heartbeat_ms, {
    message:
      'cluster.lease_ms must be at least twice cluster.heartbeat_ms, or the leader loses its lease between renewals',
  });

export type ClusterConfig = z.infer<typeof clusterConfigSchema>;
