import type { Db } from '../store/port.js';
import { linkHash } from './chain.js';
import * as q from './sql.js';

export type ChainProblem = 'gap' | 'prev_hash_mismatch' | 'hash_mismatch' | 'body_mismatch' | 'head_mismatch';

export type VerifyResult =
  | { ok: true; count: number; headSeq: number; headHash: string }
  | {
      ok: false;
      count: number;
      firstBad: { seq: number; eventId: string | null; problem: ChainProblem; detail: string };
    };

const PAGE = 2000;

/**
 * Walks the whole chain in order and recomputes every link. Names the first event that does not fit:
 * an edited body fails its own hash; a deleted row leaves a gap; a reordered pair breaks prev_hash; a
 * truncated tail no longer matches the head. Print `headHash` somewhere else to anchor it: someone with
 * write access to the database could rewrite the whole chain, but not a hash kept outside it.
 */
export async function verifyChain(db: Db): Promise<VerifyResult> {
  let expectedSeq = 1;
  let prevHash = q.GENESIS_HASH;
  let count = 0;
  for (;;) {
    const rows = await db.query<{
      seq: number;
      event_id: string;
      body: string;
      prev_hash: string;
      hash: string;
    }>(q.selectChainPage(expectedSeq - 1, PAGE));
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
      let bodyId: unknown;
      try {
        bodyId = (JSON.parse(row.body) as { event_id?: unknown }).event_id;
      } catch {
        bodyId = undefined;
      }
      if (bodyId !== row.event_id)
        return bad('body_mismatch', 'the indexed event_id differs from the stored body');
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
