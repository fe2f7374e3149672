import { afterEach, describe, expect, it } from 'vitest';
import type { Sql } from '../store/port.js';
import { dialects, explainPlan, freshStore, type TestStore, tableIndexes } from '../store/testing.js';
import * as q from './sql.js';

/**
 * Issue #13: every index on `events` and `outbox` is one a query needs (each costs a page write per
 * event), and every query the log runs per request or per read finds its rows through an index, so
 * none slows as the log grows. Proved with the planners' own EXPLAIN, on both dialects. PostgreSQL is
 * asked with sequential scans priced out, as it would be on a large table (an empty one is scanned).
 *
 * Left scanning on purpose (docs/ARCHITECTURE.md, "Indexes"): the outbox attempt count (the outbox
 * holds only unfinished rows), and `since`/`session` filters on their own (read by people, rarely).
 */

const DIALECTS = await dialects();
const FILTER = { limit: 10 };

/**
 * Each query and the index it must use (`pk` is the table's primary key). The claim's own pick of
 * rows is left to the planner: with most rows ready it walks the outbox in id order and stops at the
 * limit (SQLite), or reads outbox_ready (PostgreSQL); both are bounded by the unfinished work.
 */
const QUERIES: {
  name: string;
  sql: (d: 'sqlite' | 'postgres') => Sql;
  index: string;
  only?: 'sqlite' | 'postgres';
}[] = [
  {
    name: 'the outbox backlog',
    sql: () => q.countOpenOutbox(),
    index: 'outbox_ready',
    only: 'sqlite',
  },
  {
    name: 'relay claim: nothing earlier in the correlation',
    sql: (d) => q.claimOutbox(d, { topic: 't', now: 1, leaseUntil: 2, claimedBy: 'r', limit: 10 }),
    index: 'outbox_correlation',
  },
  {
    name: 'relay hand-off',
    sql: () =>
      q.insertOutboxHandoffs([{ eventId: 'evt_1', correlationId: 'cor_1' }], 't', 1, {
        marker: 'm',
        leaseUntil: 2,
      }),
    index: 'outbox_correlation',
    only: 'sqlite', // the in-process hand-off runs on SQLite only
  },
  {
    name: 'relay claim: the event type comes with the row',
    sql: (d) => q.claimOutbox(d, { topic: 't', now: 1, leaseUntil: 2, claimedBy: 'r', limit: 10 }),
    index: 'event_id',
  },
  { name: 'event by id', sql: () => q.selectEventBody('evt_1'), index: 'event_id' },
  { name: 'chain page', sql: () => q.selectChainPage(0, 100), index: 'pk' },
  {
    name: 'events of a correlation',
    sql: (d) => q.selectEvents(d, { ...FILTER, correlationId: 'cor_1' }),
    index: 'events_correlation',
  },
  {
    name: 'events of a task',
    sql: (d) => q.selectEvents(d, { ...FILTER, taskId: 'tsk_1' }),
    index: 'events_task',
  },
  {
    name: 'events of a type',
    sql: (d) => q.selectEvents(d, { ...FILTER, type: 'agent.k7.done', newestFirst: true }),
    index: 'events_type',
  },
  {
    name: 'events of a type family (agent.k7.*)',
    sql: (d) => q.selectEvents(d, { ...FILTER, type: 'agent.k7.*' }),
    index: 'events_type',
  },
  { name: 'events after a cursor', sql: (d) => q.selectEvents(d, { ...FILTER, afterSeq: 5 }), index: 'pk' },
];

/**
 * A log of 5,000 events of 200 types over 500 correlations and tasks, and an outbox of 2,000 open rows, analysed:
 * the planners choose as they would on a live gateway, not as on an empty table.
 */
async function seed(store: TestStore): Promise<void> {
  const series = (n: number) =>
    store.db.dialect === 'sqlite'
      ? `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT i FROM s`
      : `SELECT i FROM generate_series(1, ${n}) AS s(i)`;
  const cat = (...parts: string[]) => parts.join(' || ');
  await store.db.query({
    text: `INSERT INTO events (seq, event_id, type, occurred_at, tenant_id, correlation_id, task_id, body, prev_hash, hash, recorded_at)
           SELECT i, ${cat("'evt_'", 'i')}, ${cat("'agent.k'", '(i % 200)', "'.done'")}, '2026-12-01T00:00:00Z', 't',
                  ${cat("'cor_'", '(i % 500)')}, ${cat("'tsk_'", '(i % 500)')}, '{}', 'p', 'h', 0 FROM (${series(5000)}) x`,
  });
  await store.db.query({
    text: `INSERT INTO outbox (event_id, topic, correlation_id, status, available_at, created_at)
           SELECT ${cat("'evt_'", 'i')}, ${cat("'topic'", '(i % 4)')}, ${cat("'cor_'", '(i % 500)')},
                  CASE WHEN i % 10 = 0 THEN 'claimed' ELSE 'pending' END, i, i FROM (${series(2000)}) x`,
  });
  await store.db.query({ text: 'ANALYZE' });
}

/** The names a plan gives the index asked for (SQLite names a UNIQUE column's index itself). */
function indexNames(dialect: string, index: string): RegExp {
  if (index === 'pk') return dialect === 'sqlite' ? /INTEGER PRIMARY KEY/ : /_pkey/;
  if (index === 'event_id') return dialect === 'sqlite' ? /sqlite_autoindex_events_1/ : /events_event_id_key/;
  return new RegExp(`\\b${index}\\b`);
}

describe.each(DIALECTS)('the log’s indexes on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.cleanup());

  it('serves every log query through an index and scans no table that grows', async () => {
    store = await freshStore(dialect);
    await seed(store);
    for (const query of QUERIES.filter((x) => !x.only || x.only === dialect)) {
      const text = await explainPlan(store.db, query.sql(dialect));
      expect(text, query.name).toMatch(indexNames(dialect, query.index));
      expect(text, query.name).not.toMatch(/^SCAN events$|Seq Scan on events/m);
    }
  });

  it('has no index on events or outbox that no query uses', async () => {
    store = await freshStore(dialect);
    const rows = await tableIndexes(store.db, ['events', 'outbox']);
    const used = new Set(QUERIES.map((x) => x.index));
    for (const { name } of rows) {
      const known =
        /_pkey$/.test(name) ||
        name === 'sqlite_autoindex_events_1' ||
        name === 'events_event_id_key' ||
        used.has(name);
      expect(known, `index ${name} is used by no query`).toBe(true);
    }
  });
});
