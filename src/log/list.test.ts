import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { EventLog } from './log.js';

const DIALECTS = await dialects();
const DEFAULTS = { tenant_id: 't1', environment: 'test' };

/** The filters the console reads the log with: newest first, pages back by seq, a time window, a session. */
describe.each(DIALECTS)('listing the event log on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  async function logOf(times: string[]): Promise<EventLog> {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    for (const [i, at] of times.entries()) {
      await log.append({
        type: 'agent.tool.requested',
        occurred_at: at,
        execution: { session_id: i % 2 === 0 ? 'even' : 'odd' },
      });
    }
    return log;
  }

  it('lists newest first and pages back before a seq', async () => {
    const log = await logOf([
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
      '2026-01-03T00:00:00.000Z',
    ]);
    expect((await log.list({ newestFirst: true, limit: 2 })).map((e) => e.seq)).toEqual([3, 2]);
    expect((await log.list({ newestFirst: true, beforeSeq: 2, limit: 2 })).map((e) => e.seq)).toEqual([1]);
  });

  it('keeps events inside a time window, the upper bound exclusive', async () => {
    const log = await logOf([
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
      '2026-01-03T00:00:00.000Z',
    ]);
    const seqs = (
      await log.list({ since: '2026-01-02T00:00:00.000Z', until: '2026-01-03T00:00:00.000Z', limit: 10 })
    ).map((e) => e.seq);
    expect(seqs).toEqual([2]);
  });

  it('keeps the events of one session', async () => {
    const log = await logOf([
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
      '2026-01-03T00:00:00.000Z',
    ]);
    expect((await log.list({ sessionId: 'even', limit: 10 })).map((e) => e.seq)).toEqual([1, 3]);
  });
});
