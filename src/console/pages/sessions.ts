import type { Envelope } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import type { AwayView } from '../../signals/port.js';
import { fields, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import { badge, escapeHtml, flash, hidden, idLabel, layout, link, short, table, when } from '../shell.js';
import { APPROVER_OR_ADMIN, type ConsoleRouter, done, frame, guard, need, notice } from './common.js';

/**
 * Interactive sessions, read from the log: every event a runtime's hooks produce carries its session
 * id. The page reads the newest page of the log (`SESSION_EVENTS_READ` events) and groups it, so it
 * shows the sessions active lately, not every session ever.
 */
export const SESSION_EVENTS_READ = 1000;
/**
 * Without the signals module (whose supervisor decides stalls by `signals.stall_after_seconds` and
 * notifies them), ten minutes without an event from a session that has not ended is flagged: a turn
 * that waits for a tool, a prompt nobody answered, or an agent that died without its Stop hook.
 */
export const SESSION_STALL_SECONDS = 600;
/** Stalled sessions asked of the supervisor per page. */
const STALLED_READ = 200;
const AWAY_EVENTS_READ = 100;
/** Tasks looked up for their owner (whose away switch a session follows). */
const OWNERS_READ = 50;
/** As `PUT /v1/away` takes it. */
const OWNER_MAX = 200;

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

/** The owners whose away mode was switched lately (newest first), the tenant's own first of all. */
function switchedOwners(events: readonly Envelope[]): string[] {
  const owners = new Set<string>(['']);
  for (const e of events) {
    const owner = e.redacted_summary['owner'];
    if (typeof owner === 'string') owners.add(owner);
  }
  return [...owners];
}

function awayReason(v: AwayView): string {
  if (v.reason === 'switched_on') return 'switched on';
  if (v.reason === 'switched_off') return 'switched off';
  if (v.reason === 'no_input') return `no typed prompt for ${v.auto_after_idle_seconds} s`;
  return 'never switched';
}

function awaySwitch(v: AwayView, csrf: string | null): string {
  const owner = v.owner ? `<input type="hidden" name="owner" value="${escapeHtml(v.owner)}">` : '';
  const to = v.away ? 'off' : 'on';
  return `<form class="inline" method="post" action="/console/away">${hidden(csrf)}${owner}<input type="hidden" name="away" value="${to}"><button type="submit">Turn ${to}</button></form>`;
}

function awayRows(views: readonly AwayView[], csrf: string | null, now: number): string[][] {
  return views.map((v) => [
    escapeHtml(v.owner === '' ? 'everyone (the tenant’s switch)' : v.owner),
    `${badge(v.effective ? 'away' : 'active')} <small class="mute">${escapeHtml(awayReason(v))}</small>`,
    escapeHtml(v.changed_by ?? '—'),
    when(v.changed_at, now),
    awaySwitch(v, csrf),
  ]);
}

export function sessionPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const people = guard(ctx, APPROVER_OR_ADMIN);

  r.get('/console/sessions', people, async (c) => {
    const now = ctx.deps.now();
    const [recent, awayEvents] = await Promise.all([
      ctx.deps.log.list({ newestFirst: true, limit: SESSION_EVENTS_READ }),
      ctx.deps.log.list({ type: 'agent.away.changed', newestFirst: true, limit: AWAY_EVENTS_READ }),
    ]);
    const watch = ctx.deps.watch;
    const stalledNow = watch
      ? new Set((await watch.stalled(STALLED_READ)).map((x) => `${x.runtime}:${x.session_id}`))
      : undefined;
    // One answer to "is it stalled": the supervisor's, which notified the owner; the page's own rule
    // only when no supervisor runs.
    const sessions = summarize(
      recent.map((e) => e.envelope),
      now,
      SESSION_STALL_SECONDS * 1000,
    ).map((s) => (stalledNow ? { ...s, stalled: stalledNow.has(`${s.runtime ?? ''}:${s.id}`) } : s));
    const stallRule = watch
      ? 'stalled as the supervisor reported it (signals.stall_after_seconds)'
      : `stalled after ${SESSION_STALL_SECONDS / 60} quiet minutes`;
    const away = ctx.deps.away;
    const owners = await taskOwners(ctx, sessions);
    const switched = switchedOwners(awayEvents.map((e) => e.envelope));
    const wanted = new Set([...switched, ...owners.values()]);
    const views = away ? await Promise.all([...wanted].map((o) => away.read(o))) : [];
    const byOwner = new Map(views.map((v) => [v.owner, v]));
    const awayOf = (s: SessionSummary) => byOwner.get((s.task_id && owners.get(s.task_id)) || '');
    const rows = sessions.map((s) => {
      const a = awayOf(s);
      return [
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
        a ? badge(a.effective ? 'away' : 'at desk') : '<span class="mute">—</span>',
      ];
    });
    const csrf = c.get('session')?.csrf ?? null;
    // The tenant's switch and the owners switched lately; an owner only seen on a task follows the tenant.
    const shown = views.filter((v) => switched.includes(v.owner));
    const awaySection = away
      ? `<p class="mute">While away, permission prompts no rule decided go to the phone (docs/signals.md); a session follows its task owner's switch, or the tenant's.</p>
${table(['Owner', 'State', 'Switched by', 'When', ''], awayRows(shown, csrf, now))}`
      : '<p class="empty">The signals module is not running: no away mode.</p>';
    const body = `${flash(notice(c))}<section aria-labelledby="away-h"><h2 id="away-h">Away mode</h2>
${awaySection}</section>
<section aria-labelledby="sessions-h"><h2 id="sessions-h">Sessions <small class="mute">from the newest ${SESSION_EVENTS_READ} events; ${stallRule}</small></h2>
${table(['Session', 'Runtime', 'Agent', 'Task', 'Last activity', 'Last event', 'Events', 'State', 'Away'], rows)}</section>`;
    return html(c, layout('Sessions', await frame(c, ctx, 'sessions'), body));
  });

  /** The away switch: as `PUT /v1/away`, approvers and admins, recorded with the person's name. */
  r.post('/console/away', people, async (c) => {
    const away = need(ctx.deps.away, 'signals', 'away mode');
    const { one } = fields(c.get('form'), ['owner', 'away']);
    if (one.away !== 'on' && one.away !== 'off') throw new AppError('bad_request', '`away` is on or off');
    const owner = one.owner?.trim() || undefined;
    if (owner !== undefined && owner.length > OWNER_MAX)
      throw new AppError('bad_request', '`owner` is a name of at most 200 characters');
    const view = await away.set({
      ...(owner ? { owner } : {}),
      away: one.away === 'on',
      by: c.get('principal').name,
    });
    return done(
      c,
      '/console/sessions',
      view.away ? 'away_on' : 'away_off',
      view as unknown as Record<string, unknown>,
    );
  });
}

/** The owner of each session's task (a session follows its owner's away switch). */
async function taskOwners(
  ctx: ConsoleCtx,
  sessions: readonly SessionSummary[],
): Promise<Map<string, string>> {
  const tasks = ctx.deps.tasks;
  const ids = [...new Set(sessions.map((s) => s.task_id).filter((id): id is string => id !== null))];
  const out = new Map<string, string>();
  if (!tasks) return out;
  const found = await Promise.all(ids.slice(0, OWNERS_READ).map((id) => tasks.get(id)));
  for (const t of found) if (t?.owner) out.set(t.id, t.owner);
  return out;
}
