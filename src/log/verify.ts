import type { Db } from '../store/port.js';
import { linkHash } from './chain.js';
import * as q from './sql.js';

export type ChainProblem =
  | 'gap'
  | 'prev_hash_mismatch'
  | 'hash_mismatch'
  | 'body_mismatch'
  | 'column_mismatch'
  | 'head_mismatch';

export type VerifyResult =
  | { ok: true; count: number; headSeq: number; headHash: string }
  | {
      ok: false;
      count: number;
      firstBad: { seq: number; eventId: string | null; problem: ChainProblem; detail: string };
    };

const PAGE = 2000;

interface ChainRow {
  seq: number;
  event_id: string;
  type: string;
  occurred_at: string;
  tenant_id: string;
  correlation_id: string;
  causation_id: string | null;
  task_id: string | null;
  session_id: string | null;
  body: string;
  prev_hash: string;
  hash: string;
}

/**
 * Every indexed column of `events` and where the hashed body holds it. Queries filter on these columns
 * (`GET /v1/events?type=…`, a task's timeline), so a column edited apart from the body would hide or
 * move an event while the chain still verified. `recorded_at` is the only column not here: it is when
 * this store wrote the row, not part of the event, and nothing filters on it.
 */
export const INDEXED_COLUMNS: readonly {
  column: Exclude<keyof ChainRow, 'seq' | 'body' | 'prev_hash' | 'hash'>;
  read: (body: Record<string, unknown>) => unknown;
}[] = [
  { column: 'event_id', read: (b) => b['event_id'] },
  { column: 'type', read: (b) => b['type'] },
  { column: 'occurred_at', read: (b) => b['occurred_at'] },
  { column: 'tenant_id', read: (b) => b['tenant_id'] },
  { column: 'correlation_id', read: (b) => b['correlation_id'] },
  { column: 'causation_id', read: (b) => b['causation_id'] ?? null },
  { column: 'task_id', read: (b) => execution(b)['task_id'] ?? null },
  { column: 'session_id', read: (b) => execution(b)['session_id'] ?? null },
];

function execution(body: Record<string, unknown>): Record<string, unknown> {
  const e = body['execution'];
  return typeof e === 'object' && e !== null ? (e as Record<string, unknown>) : {};
}

function parseBody(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The first indexed column whose value is not the one the hashed body gives, if any. */
export function columnMismatch(row: ChainRow): string | undefined {
  const body = parseBody(row.body);
  if (!body) return 'body';
  for (const { column, read } of INDEXED_COLUMNS) {
    if ((row[column] ?? null) !== read(body)) return column;
  }
  return undefined;
}

/**
 * Walks the whole chain in order and recomputes every link. Names the first event that does not fit:
 * an edited body fails its own hash; an edited column (type, correlation_id, task_id, …) differs from
 * the body it was derived from; a deleted row leaves a gap; a reordered pair breaks prev_hash; a
 * truncated tail no longer matches the head. Print `headHash` somewhere else to anchor it: someone with
 * write access to the database could rewrite the whole chain, but not a hash kept outside it.
 * log.test.ts tampers with each column on both dialects.
 */
export async function verifyChain(db: Db): Promise<VerifyResult> {
  let expectedSeq = 1;
  let prevHash = q.GENESIS_HASH;
  let count = 0;
  for (;;) {
    const rows = await db.query<ChainRow>(q.selectChainPage(expectedSeq - 1, PAGE));
    if (rows.length === 0) break;
    for (const row of rows) {
      const seq = Number(row.seq);
      const bad = (problem: ChainProblem, detail: string): VerifyResult => ({
        ok: false,
        count,
        firstBad: { seq, eventId: row.event_id, problem, detail },
      });
      if (seq !== expectedSeq)
        return bad('gap', `expected event #${expectedSeq}, found #${seq}: rows are missing`);
      if (row.prev_hash !== prevHash)
        return bad('prev_hash_mismatch', 'does not link to the event before it');
      if (linkHash(prevHash, row.body) !== row.hash)
        return bad('hash_mismatch', 'its content was changed after it was written');
      const column = columnMismatch(row);
      if (column === 'event_id' || column === 'body')
        return bad('body_mismatch', 'the indexed event_id differs from the stored body');
      if (column !== undefined)
        return bad('column_mismatch', `its ${column} column differs from the stored body`);
      prevHash = row.hash;
      expectedSeq = seq + 1;
      count++;
    }
  }
  const head = (await db.query<{ seq: number; hash: string }>(q.selectHead()))[0];
  if (!head || Number(head.seq) !== count || head.hash !== prevHash) {
    return {
      ok: false,
      count,
      firstBad: {
        seq: count + 1,
        eventId: null,
        problem: 'head_mismatch',
        detail: `the chain head says #${head?.seq ?? '?'} but the log ends at #${count}: events after it were deleted`,
      },
    };
  }
  return { ok: true, count, headSeq: count, headHash: prevHash };
}
