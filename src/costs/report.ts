import type { Db } from '../store/port.js';
import { dayOf, sinceDay } from './day.js';
import { type GroupBy, report, type ReportRow } from './sql.js';

export interface CostRow {
  /** The agent, task, session or day; null for events that named no task or session. */
  key: string | null;
  turns: number;
  tool_calls: number;
  /** Summed per row: from the first to the last event of a day's row (docs/costs.md). */
  wall_time_seconds: number;
  tokens: { input: number; output: number; cache_read: number; cache_write: number; total: number };
  /** In the price table's currency; only priced tokens count. */
  cost: number;
  /** Tokens of models the price table does not name. */
  unpriced_tokens: number;
  first_at: string;
  last_at: string;
}

export interface CostReport {
  by: GroupBy;
  /** The first UTC day counted. */
  since: string;
  until: string;
  currency: string;
  rows: CostRow[];
}

export interface ReportQuery {
  by: GroupBy;
  since: string;
  limit: number;
  agent?: string;
}

const n = (v: number | string | null | undefined) => Number(v ?? 0);

export async function costReport(
  db: Db,
  tenant: string,
  currency: string,
  q: ReportQuery,
  now: number,
): Promise<CostReport> {
  const from = sinceDay(q.since, now);
  const rows = await db.query<ReportRow>(report(q.by, tenant, from, q.limit, q.agent));
  return {
    by: q.by,
    since: from,
    until: dayOf(now),
    currency,
    rows: rows.map((r) => {
      const tokens = {
        input: n(r.input_tokens),
        output: n(r.output_tokens),
        cache_read: n(r.cache_read_tokens),
        cache_write: n(r.cache_write_tokens),
        total: 0,
      };
      tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write;
      return {
        key: r.key === '' ? null : r.key,
        turns: n(r.turns),
        tool_calls: n(r.tool_calls),
        wall_time_seconds: Math.round(n(r.wall_ms) / 1000),
        tokens,
        cost: n(r.cost_micros) / 1e6,
        unpriced_tokens: n(r.unpriced_tokens),
        first_at: new Date(n(r.first_at)).toISOString(),
        last_at: new Date(n(r.last_at)).toISOString(),
      };
    }),
  };
}
