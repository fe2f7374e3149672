/** SQL for the cost ledger's tables (migration 1200); `$n` placeholders work in both dialects. */
import type { Dialect } from '../store/port.js';

export interface LedgerDelta {
  day: string;
  tenantId: string;
  agentId: string;
  taskId: string;
  sessionId: string;
  turns: number;
  toolCalls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  costMicros: number;
  unpriced: number;
  at: number;
}

/** Adds one event's counts to its row; the row's span widens to the event's time. */
export function addToLedger(dialect: Dialect, d: LedgerDelta) {
  const [min, max] = dialect === 'postgres' ? ['LEAST', 'GREATEST'] : ['MIN', 'MAX'];
  return {
    text: `INSERT INTO cost_ledger (day, tenant_id, agent_id, task_id, session_id, turns, tool_calls, input_tokens,
             output_tokens, cache_read_tokens, cache_write_tokens, cost_micros, unpriced_tokens, first_at, last_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)
           ON CONFLICT (day, tenant_id, agent_id, task_id, session_id) DO UPDATE SET
             turns = cost_ledger.turns + $6, tool_calls = cost_ledger.tool_calls + $7,
             input_tokens = cost_ledger.input_tokens + $8, output_tokens = cost_ledger.output_tokens + $9,
             cache_read_tokens = cost_ledger.cache_read_tokens + $10,
             cache_write_tokens = cost_ledger.cache_write_tokens + $11,
             cost_micros = cost_ledger.cost_micros + $12, unpriced_tokens = cost_ledger.unpriced_tokens + $13,
             first_at = ${min}(cost_ledger.first_at, $14), last_at = ${max}(cost_ledger.last_at, $14)`,
    values: [
      d.day,
      d.tenantId,
      d.agentId,
      d.taskId,
      d.sessionId,
      d.turns,
      d.toolCalls,
      d.input,
      d.output,
      d.cacheRead,
      d.cacheWrite,
      d.costMicros,
      d.unpriced,
      d.at,
    ],
  };
}

/** The columns a report may group by: names from the API, never from SQL text. */
export const GROUP_COLUMNS = {
  agent: 'agent_id',
  task: 'task_id',
  session: 'session_id',
  day: 'day',
} as const;
export type GroupBy = keyof typeof GROUP_COLUMNS;

export interface ReportRow {
  key: string;
  turns: number | string;
  tool_calls: number | string;
  wall_ms: number | string;
  input_tokens: number | string;
  output_tokens: number | string;
  cache_read_tokens: number | string;
  cache_write_tokens: number | string;
  cost_micros: number | string;
  unpriced_tokens: number | string;
  first_at: number | string;
  last_at: number | string;
}

/** Sums by `by` over the days from `fromDay` (inclusive), the costliest first. */
export function report(by: GroupBy, tenantId: string, fromDay: string, limit: number, agent?: string) {
  const col = GROUP_COLUMNS[by];
  const values: unknown[] = [tenantId, fromDay, limit];
  if (agent !== undefined) values.push(agent);
  return {
    text: `SELECT ${col} AS key, SUM(turns) AS turns, SUM(tool_calls) AS tool_calls,
                  SUM(last_at - first_at) AS wall_ms, SUM(input_tokens) AS input_tokens,
                  SUM(output_tokens) AS output_tokens, SUM(cache_read_tokens) AS cache_read_tokens,
                  SUM(cache_write_tokens) AS cache_write_tokens, SUM(cost_micros) AS cost_micros,
                  SUM(unpriced_tokens) AS unpriced_tokens, MIN(first_at) AS first_at, MAX(last_at) AS last_at
           FROM cost_ledger WHERE tenant_id = $1 AND day >= $2${agent !== undefined ? ' AND agent_id = $4' : ''}
           GROUP BY ${col}
           ORDER BY SUM(cost_micros) DESC, SUM(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) DESC,
                    ${col}
           LIMIT $3`,
    values,
  };
}

/** One day's tokens and cost: the tenant's (`agent` undefined) or one agent's. */
export function daySpend(tenantId: string, day: string, agent?: string) {
  return {
    text: `SELECT COALESCE(SUM(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens), 0) AS tokens,
                  COALESCE(SUM(cost_micros), 0) AS cost_micros
           FROM cost_ledger WHERE day = $1 AND tenant_id = $2${agent !== undefined ? ' AND agent_id = $3' : ''}`,
    values: agent !== undefined ? [day, tenantId, agent] : [day, tenantId],
  };
}

export interface CursorRow {
  source: string;
  byte_offset: number | string;
  last_id: string | null;
  total_input: number | string;
  total_cached: number | string;
  total_output: number | string;
  model: string | null;
}

export function getCursor(source: string) {
  return {
    text: `SELECT source, byte_offset, last_id, total_input, total_cached, total_output, model
           FROM cost_cursors WHERE source = $1`,
    values: [source],
  };
}

/**
 * Moves a transcript's cursor, only from where this read started (`fromOffset`; -1: no row yet), so
 * two readers of one file never count the same bytes twice. Returns the row when it moved.
 */
export function moveCursor(c: {
  source: string;
  fromOffset: number;
  offset: number;
  lastId: string | null;
  totals: { input: number; cached: number; output: number };
  model: string | null;
  now: number;
}) {
  const values = [
    c.source,
    c.offset,
    c.lastId,
    c.totals.input,
    c.totals.cached,
    c.totals.output,
    c.model,
    c.now,
  ];
  if (c.fromOffset < 0)
    return {
      text: `INSERT INTO cost_cursors (source, byte_offset, last_id, total_input, total_cached, total_output, model, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source) DO NOTHING RETURNING source`,
      values,
    };
  return {
    text: `UPDATE cost_cursors SET byte_offset = $2, last_id = $3, total_input = $4, total_cached = $5,
             total_output = $6, model = $7, updated_at = $8
           WHERE source = $1 AND byte_offset = $9 RETURNING source`,
    values: [...values, c.fromOffset],
  };
}
