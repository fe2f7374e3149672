import type { Reporter } from '../notify/port.js';
import type { Db } from '../store/port.js';
import type { StalledSession } from './port.js';
import { prefix } from '../text/index.js';
import type { SignalsConfig } from './config.js';
import type { SignalsDeps } from './module.js';
import * as q from './sql.js';

/**
 * The stall watch for interactive sessions (issue 21, point 11): launched tasks have the tasks
 * supervisor; a person's own Claude Code or Codex session had nobody. The relay keeps each session's
 * phase and clock (service.ts); this pass finds sessions `working` with no hook activity for
 * `signals.stall_after_seconds`, claims each one's single notice, and reports it as `blocked` (the
 * priority lane). Pinned by stall.test.ts.
 */

/** How often the watch looks; a notice is at most this late, against a threshold of minutes. */
export const STALL_POLL_MS = 15_000;
/** Per pass: a burst of stalls is worked through over a few passes. */
const STALL_BATCH = 50;

export async function reportStalls(
  s: SignalsDeps,
  cfg: SignalsConfig,
  reporter: Reporter | undefined,
): Promise<number> {
  if (!cfg.enabled || cfg.stall_after_seconds === 0 || !reporter) return 0;
  const now = s.now();
  const cutoff = now - cfg.stall_after_seconds * 1000;
  const rows = await s.db.query<q.SessionRow>(q.selectStalled(cutoff, STALL_BATCH));
  let sent = 0;
  for (const row of rows) {
    // Another replica (or a pass that overlapped) may have claimed it: one notice per stall.
    const [claimed] = await s.db.query(q.markStalled(row.session_key, cutoff, now));
    if (!claimed) continue;
    await reporter.report(stallReport(row, now), stallContext(row));
    sent += 1;
  }
  return sent;
}

/** The sessions stalled now, as the notices said (`signals.sessions`). */
export async function stalledSessions(db: Db, limit: number): Promise<StalledSession[]> {
  const rows = await db.query<{ session_key: string; stalled_at: number }>(q.selectStalledNow(limit));
  return rows.map((row) => {
    const { runtime, session } = parts(row);
    return { runtime, session_id: session, since: Number(row.stalled_at) };
  });
}

function parts(row: { session_key: string }) {
  const at = row.session_key.indexOf(':');
  return { runtime: row.session_key.slice(0, at), session: row.session_key.slice(at + 1) };
}

export function stallReport(row: q.SessionRow, now: number) {
  const { runtime, session } = parts(row);
  const minutes = Math.max(1, Math.round((now - Number(row.last_activity_at)) / 60_000));
  const where = row.project ? ` · ${row.project}` : '';
  return {
    stage: 'blocked' as const,
    severity: 'warn' as const,
    summary: prefix(`No activity for ${minutes} min mid-turn${where}`, 120),
    detail: [
      'The session started a turn (a prompt or a tool call) and has sent no hook since: a tool may hang, or the runtime may wait on something it does not report.',
      `runtime: ${runtime}`,
      row.project ? `project: ${row.project}` : undefined,
      `session: ${session}`,
      `last activity: ${new Date(Number(row.last_activity_at)).toISOString()}`,
    ]
      .filter(Boolean)
      .join('\n'),
  };
}

/** The session's own governance scope, named as the relay names it, so its notices stay together. */
function stallContext(row: q.SessionRow) {
  const { session } = parts(row);
  const agent = row.agent ?? 'agent';
  return {
    principal: {
      name: [agent, row.project, session && prefix(session, 8)].filter(Boolean).join(':'),
      role: 'agent' as const,
    },
    task_id: null,
    ...(session ? { session_id: session } : {}),
    key: agent,
  };
}
