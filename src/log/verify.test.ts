import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { EventLog } from './log.js';
import { INDEXED_COLUMNS, verifyChain } from './verify.js';

const DIALECTS = await dialects();
const DEFAULTS = { tenant_id: 't1', environment: 'test' };

/** What an attacker with write access to the table would put in each column to hide or move an event. */
const TAMPERED: Record<string, (string | null)[]> = {
  type: ['agent.session.started', 'AGENT.TOOL.REQUESTED'],
  correlation_id: ['c-elsewhere', null],
  task_id: ['tsk_other', null],
  session_id: ['ses_other', null],
  occurred_at: ['2020-01-01T00:00:00.000Z', ''],
  tenant_id: ['t2', 'T1'],
  causation_id: ['evt_other', null],
  event_id: ['evt_forged'],
};

describe.each(DIALECTS)('audit verify of every indexed column on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  async function logWith(n: number): Promise<EventLog> {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    let cause: string | undefined;
    for (let i = 0; i < n; i++) {
      const env = await log.append({
        type: 'agent.tool.requested',
        subject: { tool: `t${i}` },
        correlation_id: 'c0',
        ...(cause ? { causation_id: cause } : {}),
        execution: { task_id: 'tsk_a', session_id: 'ses_a' },
      });
      cause = env.event_id;
    }
    return log;
  }

  it('covers every column the events table has besides the chain itself and the write time', async () => {
    await logWith(1);
    const cols = (await store.db.query<Record<string, unknown>>({ text: 'SELECT * FROM events' }))[0]!;
    const chain = ['seq', 'body', 'prev_hash', 'hash', 'recorded_at'];
    expect(
      Object.keys(cols)
        .filter((c) => !chain.includes(c))
        .sort(),
    ).toEqual(INDEXED_COLUMNS.map((c) => c.column).sort());
    expect(Object.keys(TAMPERED).sort()).toEqual(INDEXED_COLUMNS.map((c) => c.column).sort());
  });

  const cases = Object.entries(TAMPERED).flatMap(([column, values]) =>
    values.map((value) => [column, value] as const),
  );

  it.each(cases)('fails verification when the %s column of one row is set to %j', async (column, value) => {
    await logWith(5);
    // A NOT NULL column cannot be emptied; the database itself refuses that edit.
    try {
      await store.db.query({ text: `UPDATE events SET ${column} = $1 WHERE seq = 3`, values: [value] });
    } catch {
      expect(value).toBeNull();
      return;
    }
    const result = await verifyChain(store.db);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.firstBad.seq).toBe(3);
    expect(result.count).toBe(2);
    expect(result.firstBad.problem).toBe(column === 'event_id' ? 'body_mismatch' : 'column_mismatch');
    if (column !== 'event_id') expect(result.firstBad.detail).toContain(column);
  });

  it('counts every tampered column as detected: 100 % over the whole table of edits', async () => {
    // One chain; each edit is made, verified and undone in turn, so the count needs no fresh store each.
    await logWith(3);
    let detected = 0;
    let applied = 0;
    for (const [column, value] of cases) {
      const [before] = await store.db.query<Record<string, unknown>>({
        text: `SELECT ${column} AS v FROM events WHERE seq = 2`,
      });
      try {
        await store.db.query({ text: `UPDATE events SET ${column} = $1 WHERE seq = 2`, values: [value] });
      } catch {
        continue;
      }
      applied++;
      const r = await verifyChain(store.db);
      if (!r.ok && r.firstBad.seq === 2) detected++;
      await store.db.query({ text: `UPDATE events SET ${column} = $1 WHERE seq = 2`, values: [before?.v] });
      expect((await verifyChain(store.db)).ok).toBe(true);
    }
    expect(applied).toBeGreaterThanOrEqual(Object.keys(TAMPERED).length);
    expect(detected / applied).toBe(1);
  });

  it('would otherwise hide an event from a type query: the edit hides it and verify names it', async () => {
    const log = await logWith(3);
    await store.db.query({ text: `UPDATE events SET type = 'agent.session.started' WHERE seq = 2` });
    expect((await log.list({ type: 'agent.tool.requested' })).map((e) => e.seq)).toEqual([1, 3]);
    expect(await verifyChain(store.db)).toMatchObject({
      ok: false,
      firstBad: { seq: 2, problem: 'column_mismatch' },
    });
  });

  it('still verifies an untouched chain whose events carry tasks, sessions and causes', async () => {
    await logWith(6);
    expect(await verifyChain(store.db)).toMatchObject({ ok: true, count: 6 });
  });
});
