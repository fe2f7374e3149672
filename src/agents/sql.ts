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
  card: string;
  weight: number;
  lastSeen: number | null;
  registeredBy: string;
  now: number;
}): Sql {
  return sql(
    `INSERT INTO agents (tenant_id, id, source, card_url, card, weight, status, load, success_ewma,
       latency_ewma, last_seen, registered_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'up', 0, 1, NULL, $7, $8, $9, $9)
     ON CONFLICT (tenant_id, id) DO UPDATE SET source = $3, card_url = $4, card = $5, weight = $6,
       last_seen = COALESCE($7, agents.last_seen), registered_by = $8, updated_at = $9`,
    a.tenant,
    a.id,
    a.source,
    a.cardUrl,
    a.card,
    a.weight,
    a.lastSeen,
    a.registeredBy,
    a.now,
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

/** The receipt as it stands: attempts so far, and once ended its state, result or error. */
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
       finished_at = $7 WHERE ref_id = $1`,
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

/** Collaborations a stopped gateway left `working`: they end as failed when the module starts. */
export function failAbandoned(tenant: string, now: number): Sql {
  return sql(
    `UPDATE collaborations SET state = 'failed', finished_at = $2,
       error = '{"code":"INTERRUPTED","message":"the gateway stopped while the collaboration ran"}'
     WHERE tenant_id = $1 AND state = 'working'`,
    tenant,
    now,
  );
}
