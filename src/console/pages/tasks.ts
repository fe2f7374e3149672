import { parseId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import type { TaskState, TaskView } from '../../tasks/port.js';
import { fields, fragment, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import {
  badge,
  escapeHtml,
  filterForm,
  flash,
  hidden,
  jsonBlock,
  layout,
  link,
  mayOpen,
  short,
  span,
  table,
  when,
  idLabel,
} from '../shell.js';
import { readTimeline, summaryLine, type TimelineRow } from '../timeline.js';
import {
  ADMIN,
  APPROVER_OR_ADMIN,
  type ConsoleRouter,
  done,
  frame,
  guard,
  need,
  notice,
  queryParam,
} from './common.js';

const STATES: readonly TaskState[] = [
  'submitted',
  'working',
  'input-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
];
const RUNNING: readonly TaskState[] = ['submitted', 'working', 'input-required'];
const TASKS_SHOWN = 200;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

function taskRows(tasks: readonly TaskView[], now: number): string[][] {
  return tasks.map((t) => [
    link('/console/tasks/', t.id, idLabel(t.id)),
    escapeHtml(t.title),
    badge(t.state),
    escapeHtml(t.runtime ?? '—'),
    escapeHtml(t.owner ?? '—'),
    escapeHtml(span(Math.max(0, now - Date.parse(t.created_at)))),
    String(t.steps),
    when(t.last_activity_at, now),
  ]);
}

/** `linkEvents`: an admin opens each event's envelope; an approver reads the timeline only. */
export function timelineList(
  rows: readonly TimelineRow[],
  full: boolean,
  now: number,
  linkEvents: boolean,
): string {
  if (rows.length === 0) return '<p class="empty">No events yet.</p>';
  const items = rows.map((r) => {
    const e = r.envelope;
    const head = `<span class="seq">#${r.seq}</span> ${when(e.occurred_at, now)} <code class="type">${escapeHtml(e.type)}</code> <span class="line">${escapeHtml(summaryLine(e))}</span>`;
    const body = full ? jsonBlock(e) : '';
    const line = linkEvents
      ? `<a class="ev-link" href="/console/events/${encodeURIComponent(e.event_id)}">${head}</a>`
      : `<span class="ev-link">${head}</span>`;
    return `<li class="ev d${r.depth}" data-type="${escapeHtml(e.type)}">${line}${body}</li>`;
  });
  return `<ol class="timeline${full ? ' full' : ''}">${items.join('\n')}</ol>`;
}

export function taskPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const viewer = guard(ctx, APPROVER_OR_ADMIN);

  r.get('/console/tasks', viewer, async (c) => {
    const tasks = need(ctx.deps.tasks, 'tasks', 'the task list');
    const list = need(tasks.list?.bind(tasks), 'tasks', 'listing tasks');
    const state = queryParam(c, 'state', /^[a-z-]+$/) as TaskState | undefined;
    if (state && !STATES.includes(state))
      throw new AppError('bad_request', `\`state\` is one of ${STATES.join(', ')}`);
    const owner = queryParam(c, 'owner', NAME);
    const runtime = queryParam(c, 'runtime', NAME);
    const found = await list({
      ...(state ? { state } : {}),
      ...(owner ? { owner } : {}),
      ...(runtime ? { runtime } : {}),
      limit: TASKS_SHOWN,
    });
    const now = ctx.deps.now();
    const region = `<div id="live">${table(
      ['Task', 'Title', 'State', 'Runtime', 'Owner', 'Age', 'Steps', 'Last activity'],
      taskRows(found, now),
    )}</div>`;
    if (c.req.query('fragment') !== undefined) return fragment(c, region);
    const filters = filterForm('/console/tasks', [
      { name: 'state', label: 'State', options: STATES, ...(state ? { value: state } : {}) },
      { name: 'owner', label: 'Owner', ...(owner ? { value: owner } : {}) },
      { name: 'runtime', label: 'Runtime', ...(runtime ? { value: runtime } : {}) },
    ]);
    return html(c, layout('Tasks', await frame(c, ctx, 'tasks', ['tasks']), `${filters}${region}`));
  });

  r.get('/console/tasks/:id', viewer, async (c) => {
    const tasks = need(ctx.deps.tasks, 'tasks', 'a task');
    const id = parseId('task', c.req.param('id'));
    const task = id ? await tasks.get(id) : undefined;
    if (!task) throw new AppError('not_found', `no task ${c.req.param('id').slice(0, 40)}`);
    const full = c.req.query('view') === 'full';
    const now = ctx.deps.now();
    const { rows, cut } = await readTimeline(ctx.deps.log, task);
    const region = `<div id="live">${taskFacts(task, now, c.get('principal').role === 'admin')}
<h2>Timeline <small class="mute">${rows.length} events${cut ? ', cut at the first page' : ''}</small></h2>
${timelineList(rows, full, now, c.get('principal').role === 'admin')}</div>`;
    if (c.req.query('fragment') !== undefined) return fragment(c, region);
    const principal = c.get('principal');
    const csrf = c.get('session')?.csrf ?? null;
    const cancel =
      principal.role === 'admin' && tasks.cancel && RUNNING.includes(task.state)
        ? `<form class="inline" method="post" action="/console/tasks/${encodeURIComponent(task.id)}/cancel" data-confirm="Cancel this task? Its process is stopped.">${hidden(csrf)}<button class="reject" type="submit">Cancel task</button></form>`
        : '';
    const base = `/console/tasks/${encodeURIComponent(task.id)}`;
    const views = `<p class="views" role="group" aria-label="Timeline view"><a href="${base}"${full ? '' : ' aria-current="true"'}>Compact</a> <a href="${base}?view=full"${full ? ' aria-current="true"' : ''}>Full</a> ${cancel}</p>`;
    return html(
      c,
      layout(
        task.title || task.id,
        await frame(c, ctx, 'tasks', ['tasks']),
        `${flash(notice(c))}${views}${region}`,
      ),
    );
  });

  r.post('/console/tasks/:id/cancel', guard(ctx, ADMIN), async (c) => {
    const tasks = need(ctx.deps.tasks, 'tasks', 'canceling a task');
    const cancel = need(tasks.cancel?.bind(tasks), 'tasks', 'canceling a task');
    fields(c.get('form'), []);
    const id = parseId('task', c.req.param('id'));
    if (!id) throw new AppError('not_found', `no task ${c.req.param('id').slice(0, 40)}`);
    const view = await cancel(id, c.get('principal'));
    return done(c, `/console/tasks/${encodeURIComponent(id)}`, 'canceled', {
      id: view.id,
      state: view.state,
    });
  });
}

function taskFacts(t: TaskView, now: number, admin: boolean): string {
  const rows: [string, string][] = [
    ['State', badge(t.state)],
    ['Runtime', escapeHtml(t.runtime ?? '—')],
    ['Owner', escapeHtml(t.owner ?? '—')],
    ['Session', short(t.session_id, 20)],
    ['Started', when(t.created_at, now)],
    ['Last activity', when(t.last_activity_at, now)],
    ['Steps', String(t.steps)],
    [
      'Correlation',
      admin && mayOpen('admin', 'events')
        ? `<a href="/console/events?correlation_id=${encodeURIComponent(t.correlation_id)}">${escapeHtml(t.correlation_id)}</a>`
        : escapeHtml(t.correlation_id),
    ],
    ['Task id', `<code>${escapeHtml(t.id)}</code>`],
  ];
  return `<dl class="facts wide">${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>`;
}
