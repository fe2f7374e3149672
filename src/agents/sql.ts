import type { Dialect } from '../store/port.js';
import { type Sql, sql } from '../store/port.js';

/** An `agents` row (numbers through `Number` once read: BIGINT comes back as a string on PostgreSQL). */
export interface AgentRow {
  tenant_id: string;
  id: string;
  source: string;
  card_url: string | null;
  card: string;
  weight: number;
  status: string;
  load: number;
  success_ewma: number;
  latency_ewma: number | null;
  last_seen: number | string | null;
  registered_by: string;
  created_at: number | string;
  updated_at: number | string;
  card_version: number | string;
  /** A config agent's `token_env` on the replica that configured it (0902). */
  token_env: string | null;
}

export interface CollaborationRow {
  ref_id: string;
  tenant_id: string;
  caller: string;
  waiter: string;
  from_task_id: string | null;
  skill: string;
  state: string;
  agent: string | null;
  attempts: string;
  result: string | null;
  error: string | null;
  event_id: string;
  started_at: number | string;
  finished_at: number | string | null;
}

export function selectAgents(tenant: string): Sql {
  return sql(`SELECT * FROM agents WHERE tenant_id = $1 ORDER BY id`, tenant);
}

/** Inserts an agent or replaces its card (a re-registration or a refreshed card); statistics stay. */
export function upsertAgent(a: {
  tenant: string;
  id: string;
  source: string;
  cardUrl: string | null;
  /** A config agent's `token_env` (the variable's name; the token is never stored). */
  tokenEnv?: string | null;
  card: string;
  weight: number;
  lastSeen: number | null;
  registeredBy: string;
  now: number;
}): Sql {
  return sql(
    `INSERT INTO agents (tenant_id, id, source, card_url, card, weight, status, load, success_ewma,
       latency_ewma, last_seen, registered_by, created_at, updated_at, token_env)
     VALUES ($1, $2, $3, $4, $5, $6, 'up', 0, 1, NULL, $7, $8, $9, $9, $10)
     ON CONFLICT (tenant_id, id) DO UPDATE SET source = $3, card_url = $4, card = $5, weight = $6,
       last_seen = COALESCE($7, agents.last_seen), registered_by = $8, updated_at = $9, token_env = $10,
       card_version = agents.card_version + CASE WHEN agents.card = $5 THEN 0 ELSE 1 END`,
    a.tenant,
    a.id,
    a.source,
    a.cardUrl,
    a.card,
    a.weight,
    a.lastSeen,
    a.registeredBy,
    a.now,
    a.tokenEnv ?? null,
  );
}

/** Liveness and routing statistics, written on each heartbeat and each finished attempt. */
export function updateAgentState(a: {
  tenant: string;
  id: string;
  status: string;
  load: number;
  successEwma: number;
  latencyEwma: number | null;
  lastSeen: number | null;
  now: number;
}): Sql {
  return sql(
    `UPDATE agents SET status = $3, load = $4, success_ewma = $5, latency_ewma = $6, last_seen = $7,
       updated_at = $8 WHERE tenant_id = $1 AND id = $2`,
    a.tenant,
    a.id,
    a.status,
    a.load,
    a.successEwma,
    a.latencyEwma,
    a.lastSeen,
    a.now,
  );
}

export function insertCollaboration(c: {
  refId: string;
  tenant: string;
  caller: string;
  waiter: string;
  fromTaskId: string | null;
  skill: string;
  eventId: string;
  now: number;
}): Sql {
  return sql(
    `INSERT INTO collaborations (ref_id, tenant_id, caller, waiter, from_task_id, skill, state, agent,
       attempts, result, error, event_id, started_at, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'working', NULL, '[]', NULL, NULL, $7, $8, NULL)`,
    c.refId,
    c.tenant,
    c.caller,
    c.waiter,
    c.fromTaskId,
    c.skill,
    c.eventId,
    c.now,
  );
}

/**
 * The receipt as it ends: its state, attempts, result or error. A receipt a recovery already settled
 * (its process was thought gone, recover.ts) stays as it was.
 */
export function updateCollaboration(c: {
  refId: string;
  state: string;
  agent: string | null;
  attempts: string;
  result: string | null;
  error: string | null;
  finishedAt: number | null;
}): Sql {
  return sql(
    `UPDATE collaborations SET state = $2, agent = $3, attempts = $4, result = $5, error = $6,
       finished_at = $7 WHERE ref_id = $1 AND state = 'working'`,
    c.refId,
    c.state,
    c.agent,
    c.attempts,
    c.result,
    c.error,
    c.finishedAt,
  );
}

export function selectCollaboration(tenant: string, refId: string): Sql {
  return sql(`SELECT * FROM collaborations WHERE tenant_id = $1 AND ref_id = $2`, tenant, refId);
}

/**
 * Collaborations a stopped gateway left `working`: those with no live wait row (an open attempt always
 * has one, written in the transaction that opened it) end as failed. Runs at start and with each sync,
 * so another replica's running collaborations are left alone and a dead replica's end once their rows
 * expire.
 */
export function failAbandoned(tenant: string, now: number): Sql {
  return sql(
    `UPDATE collaborations SET state = 'failed', finished_at = $2,
       error = '{"code":"INTERRUPTED","message":"the gateway stopped while the collaboration ran"}'
     WHERE tenant_id = $1 AND state = 'working' AND NOT EXISTS (
       SELECT 1 FROM agent_waits w WHERE w.ref_id = collaborations.ref_id AND w.expires_at > $2)`,
    tenant,
    now,
  );
}

/** What a replica re-reads of every agent each sync (no cards: those only when `card_version` moved). */
export interface AgentStateRow {
  id: string;
  source: string;
  weight: number;
  status: string;
  load: number;
  success_ewma: number;
  latency_ewma: number | null;
  last_seen: number | string | null;
  card_version: number | string;
  open: number | string;
}

/** Every agent's shared state and the attempts open to it from every replica (live wait rows). */
export function selectAgentStates(tenant: string, now: number): Sql {
  return sql(
    `SELECT a.id, a.source, a.weight, a.status, a.load, a.success_ewma, a.latency_ewma, a.last_seen,
       a.card_version,
       (SELECT COUNT(*) FROM agent_waits w
         WHERE w.tenant_id = a.tenant_id AND w.agent = a.id AND w.expires_at > $2) AS open
     FROM agents a WHERE a.tenant_id = $1`,
    tenant,
    now,
  );
}

export function selectAgent(tenant: string, id: string): Sql {
  return sql(`SELECT * FROM agents WHERE tenant_id = $1 AND id = $2`, tenant, id);
}

/**
 * One attempt ended: the EWMAs move in the statement itself (alpha `$3`), so two replicas ending
 * attempts of one agent at once both count; the row as it then stands comes back.
 */
export function recordOutcome(a: {
  tenant: string;
  id: string;
  alpha: number;
  ok: boolean;
  answered: boolean;
  latencyMs: number;
  now: number;
}): Sql {
  return sql(
    `UPDATE agents SET success_ewma = success_ewma + $3 * ($4 - success_ewma),
       latency_ewma = CASE WHEN $5 = 0 THEN latency_ewma WHEN latency_ewma IS NULL THEN $6
         ELSE latency_ewma + $3 * ($6 - latency_ewma) END,
       last_seen = CASE WHEN $5 = 0 THEN last_seen WHEN last_seen IS NULL OR last_seen < $7 THEN $7
         ELSE last_seen END,
       updated_at = $7
     WHERE tenant_id = $1 AND id = $2
     RETURNING success_ewma, latency_ewma, last_seen`,
    a.tenant,
    a.id,
    a.alpha,
    a.ok ? 1 : 0,
    a.answered ? 1 : 0,
    a.latencyMs,
    a.now,
  );
}

export interface WaitRow {
  waiter: string;
  agent: string;
  depth: number | string;
}

/** The wait-for graph as every replica left it: the open attempts' rows that have not expired. */
export function selectWaits(tenant: string, now: number): Sql {
  return sql(
    `SELECT waiter, agent, depth FROM agent_waits WHERE tenant_id = $1 AND expires_at > $2`,
    tenant,
    now,
  );
}

/**
 * PostgreSQL: one edge is added at a time per tenant (the lock lasts the transaction), so two
 * requests on two replicas that would together close a cycle cannot both pass their check. SQLite
 * runs one transaction at a time already.
 */
export function lockWaits(dialect: Dialect, tenant: string): Sql | undefined {
  if (dialect !== 'postgres') return undefined;
  return sql(`SELECT pg_advisory_xact_lock(hashtext($1)) AS locked`, `switchboard.agent_waits:${tenant}`);
}

export function insertWait(w: {
  tenant: string;
  refId: string;
  attempt: number;
  waiter: string;
  agent: string;
  depth: number;
  replica: string;
  expiresAt: number;
  score: number;
  startedAt: number;
}): Sql {
  return sql(
    `INSERT INTO agent_waits (tenant_id, ref_id, attempt, waiter, agent, depth, replica, expires_at, score,
       started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    w.tenant,
    w.refId,
    w.attempt,
    w.waiter,
    w.agent,
    w.depth,
    w.replica,
    w.expiresAt,
    w.score,
    w.startedAt,
  );
}

/** The remote task an open attempt runs, once SendMessage answered with one still running. */
export function setWaitTask(refId: string, attempt: number, taskId: string): Sql {
  return sql(
    `UPDATE agent_waits SET task_id = $3 WHERE ref_id = $1 AND attempt = $2`,
    refId,
    attempt,
    taskId,
  );
}

/** An open attempt whose process is gone, with what its receipt needs (recover.ts). */
export interface OrphanRow {
  ref_id: string;
  attempt: number | string;
  agent: string;
  task_id: string | null;
  score: number | null;
  started_at: number | string | null;
  replica: string;
}

/**
 * Open attempts no process watches: on SQLite at start every row (`replicas` null: one gateway), on
 * PostgreSQL those of replicas that are not alive and those past their expiry. The rows are deleted as
 * they are read: the replica whose statement deleted one settles it, and no other does.
 */
export function claimOrphans(
  tenant: string,
  o: { all: true } | { alive: readonly string[] | null; now: number },
): Sql {
  const returning = 'RETURNING ref_id, attempt, agent, task_id, score, started_at, replica';
  if ('all' in o) return sql(`DELETE FROM agent_waits WHERE tenant_id = $1 ${returning}`, tenant);
  // Without a cluster no replica is known to be gone: only rows past their expiry are.
  if (o.alive === null)
    return sql(
      `DELETE FROM agent_waits WHERE tenant_id = $1 AND expires_at <= $2 ${returning}`,
      tenant,
      o.now,
    );
  return sql(
    `DELETE FROM agent_waits WHERE tenant_id = $1 AND (expires_at <= $2
       OR replica NOT IN (SELECT json_array_elements_text($3::json))) ${returning}`,
    tenant,
    o.now,
    JSON.stringify(o.alive),
  );
}

/** The attempts a collaboration has finished so far (written when a fallback opens its attempt). */
export function updateAttempts(refId: string, attempts: string): Sql {
  return sql(`UPDATE collaborations SET attempts = $2 WHERE ref_id = $1`, refId, attempts);
}

/**
 * A collaboration whose open attempt lost its process: the receipt ends `timed_out` with that attempt
 * listed; one already ended stays as it is. Returns the row when it was still open.
 */
export function settleOrphan(c: {
  refId: string;
  agent: string;
  attempts: string;
  error: string;
  now: number;
}): Sql {
  return sql(
    `UPDATE collaborations SET state = 'timed_out', agent = $2, attempts = $3, error = $4, finished_at = $5
     WHERE ref_id = $1 AND state = 'working'
     RETURNING ref_id, tenant_id, caller, waiter, from_task_id, skill, event_id, started_at`,
    c.refId,
    c.agent,
    c.attempts,
    c.error,
    c.now,
  );
}

export function deleteWaits(refId: string): Sql {
  return sql(`DELETE FROM agent_waits WHERE ref_id = $1`, refId);
}

export interface OutcomeRow {
  success_ewma: number;
  latency_ewma: number | null;
  last_seen: number | string | null;
}

/** A cycle closed while the gate decided (SQLite, collaborate.ts): the receipt row ends at once. */
export function cycleCollaboration(refId: string, message: string, now: number): Sql {
  return sql(
    `UPDATE collaborations SET state = 'failed', finished_at = $2, error = $3 WHERE ref_id = $1`,
    refId,
    now,
    JSON.stringify({ code: 'COLLABORATION_CYCLE', message }),
  );
}

/** The gate refused the first attempt: the receipt row written with its decision ends at once. */
export function deniedCollaboration(refId: string, reasonCode: string, now: number): Sql {
  return sql(
    `UPDATE collaborations SET state = 'failed', finished_at = $2, error = $3 WHERE ref_id = $1`,
    refId,
    now,
    JSON.stringify({
      code: 'DELEGATION_DENIED',
      message: `the policy refused the delegation (${reasonCode})`,
    }),
  );
}
