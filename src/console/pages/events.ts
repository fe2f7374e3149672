import type { Envelope } from '../../envelope/index.js';
import { parseId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { verifyChain } from '../../log/index.js';
import { fields, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import {
  escapeHtml,
  filterForm,
  hidden,
  jsonBlock,
  layout,
  link,
  short,
  table,
  when,
  badge,
  idLabel,
} from '../shell.js';
import { summaryLine } from '../timeline.js';
import { ADMIN, type ConsoleRouter, frame, guard, queryParam } from './common.js';

const PAGE = 100;
/** What the vault view shows of a payload; the digest covers all of it. */
const VAULT_SHOWN_BYTES = 256 * 1024;
const TYPE = /^(agent|integration)\.[a-z0-9_]+(\.[a-z0-9_]+|\.\*)$/;
const ID = /^[a-z]{2,12}_[0-9A-Za-z]{1,64}$/;
/** A `datetime-local` value (no zone: read as UTC) or a full ISO 8601 time. */
const TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function isoTime(c: Parameters<typeof queryParam>[0], name: string): string | undefined {
  const raw = queryParam(c, name, TIME);
  if (!raw) return undefined;
  const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(raw) ? raw : `${raw.length === 10 ? `${raw}T00:00` : raw}Z`;
  const ms = Date.parse(zoned);
  if (!Number.isFinite(ms)) throw new AppError('bad_request', `\`${name}\` is not a time`);
  return new Date(ms).toISOString();
}

function eventRows(events: readonly { seq: number; envelope: Envelope }[], now: number): string[][] {
  return events.map(({ seq, envelope: e }) => [
    `<a href="/console/events/${encodeURIComponent(e.event_id)}">#${seq}</a>`,
    when(e.occurred_at, now),
    `<code class="type">${escapeHtml(e.type)}</code>`,
    e.execution.task_id ? link('/console/tasks/', e.execution.task_id, idLabel(e.execution.task_id)) : '—',
    `<a href="/console/events?correlation_id=${encodeURIComponent(e.correlation_id)}" title="${escapeHtml(e.correlation_id)}">${escapeHtml(idLabel(e.correlation_id))}</a>`,
    escapeHtml(summaryLine(e)),
  ]);
}

export function eventPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const admin = guard(ctx, ADMIN);
  const { deps } = ctx;

  r.get('/console/events', admin, async (c) => {
    const type = queryParam(c, 'type', TYPE);
    const taskId = queryParam(c, 'task_id', ID);
    const correlationId = queryParam(c, 'correlation_id', ID);
    const before = queryParam(c, 'before', /^\d{1,15}$/);
    const since = isoTime(c, 'since');
    const until = isoTime(c, 'until');
    const events = await deps.log.list({
      ...(type ? { type } : {}),
      ...(taskId ? { taskId } : {}),
      ...(correlationId ? { correlationId } : {}),
      ...(before ? { beforeSeq: Number(before) } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      newestFirst: true,
      limit: PAGE,
    });
    const now = deps.now();
    const filters = filterForm('/console/events', [
      { name: 'type', label: 'Type (or prefix.*)', ...(type ? { value: type } : {}) },
      { name: 'task_id', label: 'Task', ...(taskId ? { value: taskId } : {}) },
      { name: 'correlation_id', label: 'Correlation', ...(correlationId ? { value: correlationId } : {}) },
      { name: 'since', label: 'Since (UTC)', ...(since ? { value: since } : {}) },
      { name: 'until', label: 'Until (UTC)', ...(until ? { value: until } : {}) },
    ]);
    const older = new URL(c.req.url);
    older.searchParams.set('before', String(events.at(-1)?.seq ?? 0));
    const more =
      events.length === PAGE
        ? `<p><a href="${escapeHtml(older.pathname + older.search)}">Older events</a></p>`
        : '';
    const verify = '<p><a class="button" href="/console/events/verify">Verify the chain</a></p>';
    const body = `${verify}${filters}${table(['Seq', 'When', 'Type', 'Task', 'Correlation', 'Summary'], eventRows(events, now))}${more}`;
    return html(c, layout('Events', await frame(c, ctx, 'events'), body));
  });

  r.get('/console/events/verify', admin, async (c) => {
    const started = performance.now();
    const result = await verifyChain(deps.db);
    const ms = Math.round(performance.now() - started);
    const body = result.ok
      ? `<p class="verdict">${badge('intact')} The chain is intact: ${result.count} events, each linked to the one before it.</p>
<dl class="facts wide"><dt>Head</dt><dd>#${result.headSeq}</dd><dt>Head hash</dt><dd><code class="digest">${escapeHtml(result.headHash)}</code></dd><dt>Checked in</dt><dd>${ms} ms</dd></dl>
<p class="mute">Keep the head hash somewhere else (a note, a ticket): someone who can write to the database could rewrite the whole chain, but not a hash kept outside it.</p>`
      : `<p class="verdict">${badge('broken')} The chain is broken at event #${result.firstBad.seq}.</p>
<dl class="facts wide"><dt>Problem</dt><dd><code>${escapeHtml(result.firstBad.problem)}</code></dd><dt>Detail</dt><dd>${escapeHtml(result.firstBad.detail)}</dd>
<dt>Event</dt><dd>${result.firstBad.eventId ? link('/console/events/', result.firstBad.eventId) : '—'}</dd><dt>Intact before it</dt><dd>${result.count} events</dd></dl>`;
    return html(c, layout('Chain verification', await frame(c, ctx, 'events'), body), result.ok ? 200 : 409);
  });

  r.get('/console/events/:id', admin, async (c) => {
    const id = parseId('event', c.req.param('id'));
    const found = id ? await deps.log.get(id) : undefined;
    if (!found) throw new AppError('not_found', `no event ${c.req.param('id').slice(0, 40)}`);
    const e = found.envelope;
    const now = deps.now();
    const facts: [string, string][] = [
      ['Seq', `#${found.seq}`],
      ['Type', `<code class="type">${escapeHtml(e.type)}</code>`],
      ['When', `${when(e.occurred_at, now)} <small class="mute">${escapeHtml(e.occurred_at)}</small>`],
      [
        'Correlation',
        `<a href="/console/events?correlation_id=${encodeURIComponent(e.correlation_id)}">${escapeHtml(e.correlation_id)}</a>`,
      ],
      ['Caused by', e.causation_id ? link('/console/events/', e.causation_id) : '—'],
      ['Task', e.execution.task_id ? link('/console/tasks/', e.execution.task_id) : '—'],
      ['Session', short(e.execution.session_id, 24)],
      ['Payload', e.payload_ref ? `<code>${escapeHtml(e.payload_digest ?? '')}</code>` : 'none'],
    ];
    const summary = Object.entries(e.redacted_summary).map(([k, v]) => [
      `<code>${escapeHtml(k)}</code>`,
      typeof v === 'string' ? escapeHtml(v) : `<code>${escapeHtml(JSON.stringify(v))}</code>`,
    ]);
    const csrf = c.get('session')?.csrf ?? null;
    const vault = e.payload_ref
      ? `<form method="post" action="/console/events/${encodeURIComponent(e.event_id)}/payload" data-confirm="Open the raw payload? The opening is recorded in the log with your name.">${hidden(csrf)}
<button type="submit">Open the raw payload (recorded)</button></form>`
      : '';
    const body = `<dl class="facts wide">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>
<h2>Redacted summary</h2>${table(['Field', 'Value'], summary)}
${vault}
<h2>Envelope</h2>${jsonBlock(e, 20_000)}`;
    return html(c, layout(`Event #${found.seq}`, await frame(c, ctx, 'events'), body));
  });

  /**
   * The vault view: the one place a raw payload is shown. A POST (it writes the audit event), admin
   * only, CSRF-checked; the event names who opened what and commits before the payload is sent.
   */
  r.post('/console/events/:id/payload', admin, async (c) => {
    fields(c.get('form'), []);
    const id = parseId('event', c.req.param('id'));
    const found = id ? await deps.log.get(id) : undefined;
    if (!found) throw new AppError('not_found', `no event ${c.req.param('id').slice(0, 40)}`);
    const e = found.envelope;
    if (!e.payload_ref) throw new AppError('not_found', 'this event has no payload in the vault');
    const bytes = await deps.vault.get(e.payload_ref);
    const principal = c.get('principal');
    await deps.emit({
      type: 'agent.payload.viewed',
      causation_id: e.event_id,
      correlation_id: e.correlation_id,
      actor: { user_id: principal.name },
      subject: { resource_ref: e.payload_ref },
      payload_digest: e.payload_digest,
      redacted_summary: {
        event_id: e.event_id,
        payload_ref: e.payload_ref,
        by: principal.name,
        role: principal.role,
        via: 'console',
        outcome: bytes ? 'shown' : 'gone',
      },
    });
    if (!bytes) throw new AppError('expired', 'the payload is no longer in the vault (past its retention)');
    const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, VAULT_SHOWN_BYTES));
    const cut =
      bytes.byteLength > VAULT_SHOWN_BYTES
        ? `<p class="mute">Cut at ${VAULT_SHOWN_BYTES} bytes of ${bytes.byteLength}.</p>`
        : '';
    const body = `<p class="flash bad" role="status">This is the raw payload: it may hold secrets. Your opening was recorded.</p>
<dl class="facts wide"><dt>Event</dt><dd>${link('/console/events/', e.event_id)}</dd><dt>Digest</dt><dd><code class="digest">${escapeHtml(e.payload_digest ?? '')}</code></dd></dl>
<pre class="json raw">${escapeHtml(text)}</pre>${cut}`;
    return html(c, layout('Raw payload', await frame(c, ctx, 'events'), body));
  });
}
