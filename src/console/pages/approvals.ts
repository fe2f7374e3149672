import type { ApprovalDetail } from '../../approvals/port.js';
import { parseId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { type ConsoleContext, fields, fragment, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import {
  badge,
  escapeHtml,
  flash,
  hidden,
  layout,
  link,
  short,
  span,
  table,
  when,
  idLabel,
} from '../shell.js';
import { APPROVER_OR_ADMIN, type ConsoleRouter, done, frame, guard, need, notice } from './common.js';

/** The inbox shows this many pending approvals, soonest to expire first. */
const PENDING_SHOWN = 200;
/** And this many decided ones, newest first. */
const DECIDED_SHOWN = 30;
/** Decision events read to tell where each decision came from. */
const DECISION_EVENTS_READ = 500;
/** The plan input shown on a card; the digest covers all of it. */
const INPUT_SHOWN_CHARS = 4000;
/** A comment is a sentence or two (the approvals API takes up to 2000 characters). */
const COMMENT_MAX = 2000;

/**
 * Where a decision came from. Chat callbacks decide as `slack:<user>`, `telegram:<user>`,
 * `feishu:<user>`; a signed link (the phone page, ntfy's buttons) as `link`; a key records `via` in
 * the decision's event: `console` from here, `key` from the API or the CLI.
 */
export function surface(decidedBy: string | null, via: string | undefined, state: string): string {
  if (state === 'expired') return 'nobody (it expired)';
  const prefix = decidedBy?.split(':')[0];
  if (prefix === 'slack') return 'Slack';
  if (prefix === 'telegram') return 'Telegram';
  if (prefix === 'feishu') return 'Feishu';
  if (decidedBy === 'link' || via === 'link') return 'phone link (page or ntfy)';
  if (via === 'console') return 'console';
  if (via === 'key') return 'API or CLI';
  return 'unknown';
}

function timeLeft(expiresAt: string, now: number): string {
  const left = Date.parse(expiresAt) - now;
  return left > 0 ? `${span(left)} left` : 'expired';
}

export function approvalCard(a: ApprovalDetail, csrf: string | null, now: number): string {
  let input = JSON.stringify(a.plan.input, null, 2) ?? '{}';
  if (input.length > INPUT_SHOWN_CHARS)
    input = `${input.slice(0, INPUT_SHOWN_CHARS)}\n… (cut; the plan digest covers all of it)`;
  const rows: [string, string][] = [
    ['Reason', escapeHtml(a.reason)],
    ['Tool', escapeHtml(a.plan.tool)],
    ...(a.plan.resource ? ([['Resource', escapeHtml(a.plan.resource)]] as [string, string][]) : []),
    ['Asked by', escapeHtml(a.requested_by)],
    ...(a.task_id ? ([['Task', link('/console/tasks/', a.task_id)]] as [string, string][]) : []),
    ['Asked', when(a.created_at, now)],
    ['Plan digest', `<code class="digest">${escapeHtml(a.plan_digest)}</code>`],
  ];
  const id = escapeHtml(a.id);
  return `<article class="card approval" id="${id}" data-key="${id}" data-expires="${escapeHtml(a.expires_at)}">
<header><h2>${escapeHtml(a.action)}</h2><span class="left" data-countdown>${escapeHtml(timeLeft(a.expires_at, now))}</span></header>
<dl class="facts">${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>
<details open><summary>Input</summary><pre class="json">${escapeHtml(input)}</pre></details>
<form class="decide" method="post" action="/console/approvals/${encodeURIComponent(a.id)}/decision">${hidden(csrf)}
<label for="comment-${id}">Comment <small>(optional, goes to the agent)</small></label>
<textarea id="comment-${id}" name="comment" rows="2" maxlength="${COMMENT_MAX}"></textarea>
<div class="buttons"><button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="reject" type="submit" name="decision" value="reject">Reject</button></div>
<p class="error" role="alert" hidden></p>
</form>
<p class="mute"><small>${id}</small></p>
</article>`;
}

export interface Inbox {
  pending: ApprovalDetail[];
  decided: ApprovalDetail[];
  via: Map<string, string>;
}

async function readInbox(ctx: ConsoleCtx): Promise<Inbox> {
  const approvals = need(ctx.deps.approvals, 'approvals', 'the approvals inbox');
  const list = need(approvals.list?.bind(approvals), 'approvals', 'listing approvals');
  const [pending, recent, events] = await Promise.all([
    list({ state: 'pending', limit: PENDING_SHOWN }),
    list({ limit: DECIDED_SHOWN * 2 }),
    ctx.deps.log.list({ type: 'agent.approval.*', newestFirst: true, limit: DECISION_EVENTS_READ }),
  ]);
  pending.sort((a, b) => Date.parse(a.expires_at) - Date.parse(b.expires_at));
  const via = new Map<string, string>();
  for (const { envelope: e } of events) {
    const id = e.redacted_summary['approval_id'];
    const v = e.redacted_summary['via'];
    if (typeof id === 'string' && typeof v === 'string' && !via.has(id)) via.set(id, v);
  }
  const decided = recent.filter((a) => a.state !== 'pending').slice(0, DECIDED_SHOWN);
  return { pending, decided, via };
}

function decidedTable(inbox: Inbox, now: number): string {
  const rows = inbox.decided.map((a) => {
    const recheck =
      a.recheck?.outcome === 'no_capability'
        ? ` <small class="warn">(no capability: ${escapeHtml(a.recheck.reason_code)})</small>`
        : '';
    return [
      escapeHtml(a.action),
      badge(a.state) + recheck,
      escapeHtml(a.decided_by ?? '—'),
      escapeHtml(surface(a.decided_by, inbox.via.get(a.id), a.state)),
      when(a.decided_at, now),
      a.comment ? escapeHtml(a.comment) : '<span class="mute">—</span>',
      a.task_id ? link('/console/tasks/', a.task_id, idLabel(a.task_id)) : short(null),
    ];
  });
  return table(['Action', 'Outcome', 'Decided by', 'From', 'When', 'Comment', 'Task'], rows);
}

/**
 * The live region. The script merges `data-merge` containers by each child's `data-key` (a card being
 * typed into is never replaced) and swaps `data-block` elements whole.
 */
export function inboxRegion(inbox: Inbox, csrf: string | null, now: number): string {
  const cards = inbox.pending.map((a) => approvalCard(a, csrf, now)).join('\n');
  const empty = inbox.pending.length === 0 ? '<p class="empty">No approval is waiting.</p>' : '';
  return `<div id="live" data-pending="${inbox.pending.length}">
<section aria-labelledby="pending-h"><h2 id="pending-h" data-block>Waiting for you <span class="n">${inbox.pending.length}</span></h2>
<div id="pending-empty" data-block>${empty}</div>
<div class="cards" id="pending" data-merge>${cards}</div></section>
<section aria-labelledby="decided-h"><h2 id="decided-h">Decided</h2>
<div id="decided" data-block>${decidedTable(inbox, now)}</div></section>
</div>`;
}

export function approvalPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const page = guard(ctx, APPROVER_OR_ADMIN);

  const inboxPage = async (c: ConsoleContext) => {
    const inbox = await readInbox(ctx);
    const csrf = c.get('session')?.csrf ?? null;
    const now = ctx.deps.now();
    const region = inboxRegion(inbox, csrf, now);
    if (c.req.query('fragment') !== undefined) {
      return fragment(c, region, { 'x-pending-count': String(inbox.pending.length) });
    }
    const f = await frame(c, ctx, 'approvals', ['approvals']);
    f.pending = inbox.pending.length;
    return html(c, layout('Approvals', f, `${flash(notice(c))}${region}`));
  };
  r.get('/console/', page, inboxPage);
  r.get('/console/approvals', page, inboxPage);

  r.post('/console/approvals/:id/decision', page, async (c) => {
    const approvals = need(ctx.deps.approvals, 'approvals', 'deciding');
    const id = parseId('approval', c.req.param('id'));
    if (!id) throw new AppError('not_found', `no approval ${c.req.param('id').slice(0, 40)}`);
    const { one } = fields(c.get('form'), ['decision', 'comment']);
    if (one.decision !== 'approve' && one.decision !== 'reject')
      throw new AppError('bad_request', '`decision` is approve or reject');
    const comment = one.comment?.trim();
    if (comment && comment.length > COMMENT_MAX)
      throw new AppError('bad_request', `a comment is at most ${COMMENT_MAX} characters`);
    const view = await approvals.decide(
      id,
      one.decision,
      c.get('principal'),
      comment || undefined,
      'console',
    );
    return done(c, '/console/', view.state === 'approved' ? 'approved' : 'rejected', {
      id: view.id,
      status: view.state,
      decided_by: view.decided_by,
    });
  });
}
