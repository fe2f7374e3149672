import type { Logger } from 'pino';
import type { Envelope, EnvelopeInput } from '../envelope/index.js';
import type { Db } from '../store/port.js';
import { endedEvent } from './events.js';
import type { Attempt, Receipt } from './port.js';
import type { Registry } from './registry.js';
import type { Remote } from './remote.js';
import * as q from './sql.js';

/**
 * Attempts whose process is gone (a gateway that crashed mid-collaboration): the recovery claims their
 * wait rows (deleted as they are read, so one replica settles each), ends each receipt `timed_out` with
 * the attempt listed and `INTERRUPTED` as the error, records `agent.collaboration.failed` on the
 * collaboration's correlation, and cancels the remote task through egress (CancelTask, with the agent's
 * token). Runs at a gateway's start (SQLite: every row, it is the only gateway) and in the leader's
 * sweep (PostgreSQL: rows of replicas that are not alive, and rows past their expiry). No fallback is
 * tried: the caller that would have waited for it is gone with its process (agents.test.ts, "a gateway
 * that stopped mid-collaboration").
 */

export interface RecoverDeps {
  db: Db;
  tenant: string;
  now: () => number;
  logger: Logger;
  registry: Registry;
  remote: Remote;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  /** The collaboration's `agent.collaboration.requested`, the cause of its end. */
  event(id: string): Promise<Envelope | undefined>;
}

const INTERRUPTED = 'the gateway running the attempt stopped; the remote task was cancelled';

/**
 * Settles the orphaned attempts `which` selects and cancels their remote tasks; resolves once the
 * receipts committed, with the cancels (each failure logged, none thrown) as `cancels`.
 */
export async function recoverOrphans(
  d: RecoverDeps,
  which: Parameters<typeof q.claimOrphans>[1],
): Promise<{ settled: number; cancels: Promise<void> }> {
  const now = d.now();
  const claimed = await d.db.tx(async (tx) => {
    const rows = await tx.query<q.OrphanRow>(q.claimOrphans(d.tenant, which));
    const out: q.OrphanRow[] = [];
    for (const r of rows) {
      const [row] = await tx.query<q.CollaborationRow>(q.selectCollaboration(d.tenant, r.ref_id));
      if (row?.state !== 'working') continue;
      const attempt: Attempt = {
        agent: r.agent,
        state: 'timed_out',
        task_id: r.task_id,
        score: r.score === null ? 0 : Number(r.score),
        started_at: new Date(
          r.started_at === null ? Number(row.started_at) : Number(r.started_at),
        ).toISOString(),
        finished_at: new Date(now).toISOString(),
        latency_ms: null,
        error: INTERRUPTED,
      };
      const attempts = [...(JSON.parse(row.attempts) as Attempt[]), attempt];
      const error = { code: 'INTERRUPTED', message: INTERRUPTED };
      const [settled] = await tx.query(
        q.settleOrphan({
          refId: r.ref_id,
          agent: r.agent,
          attempts: JSON.stringify(attempts),
          error: JSON.stringify(error),
          now,
        }),
      );
      if (!settled) continue;
      const cause = await d.event(row.event_id);
      if (cause) {
        const receipt: Receipt = {
          ref_id: r.ref_id,
          skill: row.skill,
          agent: r.agent,
          state: 'timed_out',
          error,
          started_at: new Date(Number(row.started_at)).toISOString(),
          finished_at: new Date(now).toISOString(),
          attempts,
          from_task_id: row.from_task_id,
        };
        await d.emit(endedEvent(cause, { caller: { name: row.caller } }, receipt), tx);
      }
      out.push(r);
    }
    return out;
  });
  const cancels = Promise.all(
    claimed.map(async (r) => {
      const agent = d.registry.get(r.agent);
      if (!r.task_id || !agent) return;
      await d.remote.cancel(agent, r.task_id).catch((err: unknown) => {
        d.logger.warn(
          { ref_id: r.ref_id, agent: r.agent, err: (err as Error).message },
          'agents: the remote task of an interrupted attempt was not cancelled',
        );
      });
    }),
  ).then(() => undefined);
  if (claimed.length > 0)
    d.logger.warn({ collaborations: claimed.length }, 'agents: interrupted collaborations settled');
  return { settled: claimed.length, cancels };
}
