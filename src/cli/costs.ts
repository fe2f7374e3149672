/**
 * `switchboard costs`: the cost ledger (`GET /v1/costs`, admin key) as a table, one line per agent,
 * task, session or day, the costliest first; `--json` prints the answer as it came.
 */

import { gatewayCall } from './client.js';

export interface CostsCliOptions {
  by?: string;
  since?: string;
  agent?: string;
  limit?: string;
  json?: boolean;
  url?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
}

interface CostRowJson {
  key: string | null;
  turns: number;
  tool_calls: number;
  wall_time_seconds: number;
  tokens: { total: number };
  cost: number;
  unpriced_tokens: number;
}

interface CostReportJson {
  by: string;
  since: string;
  until: string;
  currency: string;
  rows: CostRowJson[];
}

/** 3,725 s → `1h02m`; under a minute in seconds. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** The report as aligned columns, with a total line. */
export function formatCosts(r: CostReportJson): string[] {
  const head = [r.by, 'turns', 'tools', 'wall', 'tokens', `cost (${r.currency})`];
  const line = (row: CostRowJson) => [
    row.key ?? '(none)',
    String(row.turns),
    String(row.tool_calls),
    formatDuration(row.wall_time_seconds),
    row.tokens.total.toLocaleString('en-US') + (row.unpriced_tokens > 0 ? '*' : ''),
    row.cost.toFixed(4),
  ];
  const sum = (f: (row: CostRowJson) => number) => r.rows.reduce((n, row) => n + f(row), 0);
  const rows = [
    head,
    ...r.rows.map(line),
    [
      'total',
      String(sum((x) => x.turns)),
      String(sum((x) => x.tool_calls)),
      formatDuration(sum((x) => x.wall_time_seconds)),
      sum((x) => x.tokens.total).toLocaleString('en-US'),
      sum((x) => x.cost).toFixed(4),
    ],
  ];
  const widths = head.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const out = [`${r.since} … ${r.until} (UTC days)`];
  for (const row of rows)
    out.push(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  if (r.rows.some((row) => row.unpriced_tokens > 0))
    out.push('* some tokens are of models costs.prices does not name: they are not in the cost');
  return out;
}

export async function costs(opts: CostsCliOptions = {}): Promise<void> {
  const q = new URLSearchParams();
  if (opts.by) q.set('by', opts.by);
  if (opts.since) q.set('since', opts.since);
  if (opts.agent) q.set('agent', opts.agent);
  if (opts.limit) q.set('limit', opts.limit);
  const body = (await gatewayCall('GET', `/v1/costs${q.size > 0 ? `?${q}` : ''}`, opts, {
    roles: ['admin'],
    forbidden: () => 'the cost ledger needs an admin key (SWITCHBOARD_KEY)',
  })) as CostReportJson;
  const print = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  if (opts.json) print(JSON.stringify(body, null, 2));
  else for (const l of formatCosts(body)) print(l);
}
