import type { Envelope } from '../../envelope/index.js';
import { html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import { badge, escapeHtml, layout, link, short, table, when, idLabel } from '../shell.js';
import { APPROVER_OR_ADMIN, type ConsoleRouter, frame, guard } from './common.js';

/**
 * Interactive sessions, read from the log: every event a runtime's hooks produce carries its session
 * id. The page reads the newest page of the log (`SESSION_EVENTS_READ` events) and groups it, so it
 * shows the sessions active lately, not every session ever.
 */
export const SESSION_EVENTS_READ = 1000;
/**
 * Ten minutes without an event from a session that has not ended is a stall worth a look: a turn
 * that waits for a tool, a prompt nobody answered, or an agent that died without its Stop hook.
 */
export const SESSION_STALL_SECONDS = 600;
const AWAY_EVENTS_READ = 100;

export interface SessionSummary {
  id: string;
  runtime: string | null;
  agent: string | null;
  task_id: string | null;
  first_at: string;
  last_at: string;
  last_type: string;
  events: number;
  ended: boolean;
  /** Approvals asked in the session and not (yet) seen decided in the events read. */
  waiting: number;
  stalled: boolean;
}

/** Groups events (newest first or not) by session; the newest session first. Pure. */
export function summarize(events: readonly Envelope[], now: number, stallMs: number): SessionSummary[] {
  const sorted = [...events].sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  const out = new Map<string, SessionSummary & { asked: Set<string> }>();
  for (const e of sorted) {
    const id = e.execution.session_id;
    if (!id) continue;
    let s = out.get(id);
    if (!s) {
      s = {
        id,
        runtime: null,
        agent: null,
        task_id: null,
        first_at: e.occurred_at,
        last_at: e.occurred_at,
        last_type: e.type,
        events: 0,
        ended: false,
        waiting: 0,
        stalled: false,
        asked: new Set(),
      };
      out.set(id, s);
    }
    s.events += 1;
    s.last_at = e.occurred_at;
    s.last_type = e.type;
    s.runtime = e.runtime.kind ?? s.runtime;
    s.agent = e.actor.agent_id ?? s.agent;
    s.task_id = e.execution.task_id ?? s.task_id;
    if (e.type === 'agent.session.ended') s.ended = true;
    else if (e.type === 'agent.session.started') s.ended = false;
    const approval = e.redacted_summary['approval_id'];
    if (typeof approval === 'string') {
      if (e.type === 'agent.approval.requested') s.asked.add(approval);
      else s.asked.delete(approval);
    }
  }
  return [...out.values()]
    .map(({ asked, ...s }) => ({
      ...s,
      waiting: asked.size,
      stalled: !s.ended && now - Date.parse(s.last_at) > stallMs,
    }))
    .sort((a, b) => b.last_at.localeCompare(a.last_at));
}

interface AwayRow {
  owner: string;
  away: boolean;
  by: string | null;
  at: string;
}

function awayStates(events: readonly Envelope[]): AwayRow[] {
  const seen = new Map<string, AwayRow>();
  for (const e of events) {
    const owner = typeof e.redacted_summary['owner'] === 'string' ? e.redacted_summary['owner'] : '';
    if (seen.has(owner)) continue;
    seen.set(owner, {
      owner,
      away: e.redacted_summary['effective'] === true || e.redacted_summary['away'] === true,
      by: e.actor.user_id,
      at: e.occurred_at,
    });
  }
  return [...seen.values()];
}

export function sessionPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  r.get('/console/sessions', guard(ctx, APPROVER_OR_ADMIN), async (c) => {
    const now = ctx.deps.now();
    const [recent, away] = await Promise.all([
      ctx.deps.log.list({ newestFirst: true, limit: SESSION_EVENTS_READ }),
      ctx.deps.log.list({ type: 'agent.away.changed', newestFirst: true, limit: AWAY_EVENTS_READ }),
    ]);
    const sessions = summarize(
      recent.map((e) => e.envelope),
      now,
      SESSION_STALL_SECONDS * 1000,
    );
    const rows = sessions.map((s) => [
      short(s.id, 18),
      escapeHtml(s.runtime ?? '—'),
      escapeHtml(s.agent ?? '—'),
      s.task_id ? link('/console/tasks/', s.task_id, idLabel(s.task_id)) : '<span class="mute">—</span>',
      when(s.last_at, now),
      `<code class="type">${escapeHtml(s.last_type)}</code>`,
      String(s.events),
      [
        badge(s.ended ? 'ended' : 'active'),
        s.stalled ? badge('stalled') : '',
        s.waiting > 0 ? `<a href="/console/">${badge('pending')} ${s.waiting}</a>` : '',
      ].join(' '),
    ]);
    const awayRows = awayStates(away.map((e) => e.envelope)).map((a) => [
      escapeHtml(a.owner === '' ? 'everyone (tenant)' : a.owner),
      badge(a.away ? 'away' : 'active'),
      escapeHtml(a.by ?? '—'),
      when(a.at, now),
    ]);
    const body = `<section aria-labelledby="away-h"><h2 id="away-h">Away mode</h2>
${awayRows.length ? table(['Owner', 'State', 'Switched by', 'When'], awayRows) : '<p class="empty">Away mode was never switched; prompts stay at the desk.</p>'}</section>
<section aria-labelledby="sessions-h"><h2 id="sessions-h">Sessions <small class="mute">from the newest ${SESSION_EVENTS_READ} events; stalled after ${SESSION_STALL_SECONDS / 60} quiet minutes</small></h2>
${table(['Session', 'Runtime', 'Agent', 'Task', 'Last activity', 'Last event', 'Events', 'State'], rows)}</section>`;
    return html(c, layout('Sessions', await frame(c, ctx, 'sessions'), body));
  });
}
