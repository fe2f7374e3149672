import { afterEach, describe, expect, it } from 'vitest';
import type { Sql } from '../store/port.js';
import { dialects, explainPlan, freshStore, type TestStore, tableIndexes } from '../store/testing.js';
import * as q from './sql.js';

/**
 * Issue #15: every index on `reach_touches` is one a query needs (each costs a page write per touch),
 * and the queries a touch, the cap, short-term memory and the sweep run find their rows through one.
 * The task index is partial (`task_id IS NOT NULL`, migration 0703): a taskless touch writes no entry,
 * and the queries by task still use it. Proved with the planners' own EXPLAIN on both dialects;
 * PostgreSQL is asked with sequential scans priced out, as on a large table.
 *
 * Left scanning on purpose (docs/reach.md, "Indexes"): the sweep of touches interrupted past their
 * deadline (once a minute, rare rows) and the console's list of recent touches (read by people).
 */

const DIALECTS = await dialects();
const T = 'default';

const QUERIES: { name: string; sql: Sql; index: string }[] = [
  { name: 'a caller’s own touch (idempotency, GET)', sql: q.selectTouch(T, 'bench', 'tch_1'), index: 'pk' },
  { name: 'the per-task cap', sql: q.countTaskTouches(T, 'tsk_1'), index: 'reach_touches_task' },
  {
    name: 'short-term memory of a task',
    sql: q.selectTaskSummaries(T, 'bench', 'tsk_1', 5),
    index: 'reach_touches_task',
  },
  { name: 'the expiry sweep', sql: q.deleteExpiredTouches(1_000), index: 'reach_touches_expires' },
];

/** 4,000 touches, half of them in 200 tasks, analysed: the planners choose as on a live gateway. */
async function seed(store: TestStore): Promise<void> {
  const series =
    store.db.dialect === 'sqlite'
      ? 'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 4000) SELECT i FROM s'
      : 'SELECT i FROM generate_series(1, 4000) AS s(i)';
  await store.db.query({
    text: `INSERT INTO reach_touches (tenant_id, caller, request_id, task_id, owner, tool, channel, params_digest,
             status, summary, created_at, updated_at, deadline_at, expires_at)
           SELECT '${T}', 'bench', 'tch_' || i, CASE WHEN i % 2 = 0 THEN 'tsk_' || (i % 200) END, 'bench',
                  'bench.echo', 'sync', 'd', 'done', 's', i, i, i, 100000 + i FROM (${series}) x`,
  });
  await store.db.query({ text: 'ANALYZE' });
}

function indexNames(dialect: string, index: string): RegExp {
  if (index === 'pk') return dialect === 'sqlite' ? /sqlite_autoindex_reach_touches_1/ : /reach_touches_pkey/;
  return new RegExp(`\\b${index}\\b`);
}

describe.each(DIALECTS)('reach’s indexes on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.cleanup());

  it('serves every per-touch, cap, memory and sweep query through an index', async () => {
    store = await freshStore(dialect);
    await seed(store);
    for (const query of QUERIES) {
      const text = await explainPlan(store.db, query.sql);
      expect(text, query.name).toMatch(indexNames(dialect, query.index));
      expect(text, query.name).not.toMatch(/^SCAN reach_touches$|Seq Scan on reach_touches/m);
    }
  });

  it('has no index on reach_touches that no query uses, and the task index leaves taskless touches out', async () => {
    store = await freshStore(dialect);
    const rows = await tableIndexes(store.db, ['reach_touches']);
    const names = rows.map((r) => r.name).filter((n) => !/autoindex|_pkey$/.test(n));
    expect(names.sort()).toEqual(['reach_touches_expires', 'reach_touches_task']);
    const task = rows.find((r) => r.name === 'reach_touches_task')!;
    expect(task.sql).toMatch(/WHERE \(?task_id IS NOT NULL\)?/i);
  });
});
