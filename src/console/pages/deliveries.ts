import type { DeliveryView } from '../../delivery/port.js';
import { AppError } from '../../errors/index.js';
import { fields, fragment, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import {
  badge,
  escapeHtml,
  filterForm,
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
import { ADMIN, type ConsoleRouter, done, frame, guard, need, notice, queryParam } from './common.js';

const STATUSES = ['pending', 'claimed', 'succeeded', 'dead', 'unknown', 'reconcile'] as const;
const DELIVERY_ID = /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/;
const DESTINATION = /^[a-z0-9][a-z0-9_-]*$/;
const SHOWN = 200;
/** The DLQ page groups up to this many dead deliveries (the delivery API's page). */
const DLQ_READ = 1000;
/** Errors are grouped by their first words: the tail of a message often carries an id or a time. */
const ERROR_KEY_CHARS = 60;

export interface DeadGroup {
  destination: string;
  error: string;
  ids: string[];
  first: string;
  last: string;
  status: number | null;
}

/** Dead letters grouped by destination and error, largest group first. Pure. */
export function groupDead(dead: readonly DeliveryView[]): DeadGroup[] {
  const groups = new Map<string, DeadGroup>();
  for (const d of dead) {
    const error = (d.last_error ?? (d.last_status ? `HTTP ${d.last_status}` : 'no error recorded')).slice(
      0,
      ERROR_KEY_CHARS,
    );
    const key = `${d.destination}\u0000${error}`;
    const g = groups.get(key);
    if (!g) {
      groups.set(key, {
        destination: d.destination,
        error,
        ids: [d.id],
        first: d.updated_at,
        last: d.updated_at,
        status: d.last_status,
      });
      continue;
    }
    g.ids.push(d.id);
    if (d.updated_at < g.first) g.first = d.updated_at;
    if (d.updated_at > g.last) g.last = d.updated_at;
  }
  return [...groups.values()].sort(
    (a, b) => b.ids.length - a.ids.length || a.destination.localeCompare(b.destination),
  );
}

function replayForm(ids: readonly string[], csrf: string | null, label: string): string {
  const inputs = ids.map((id) => `<input type="hidden" name="ids" value="${escapeHtml(id)}">`).join('');
  return `<form class="inline" method="post" action="/console/deliveries/replay">${hidden(csrf)}${inputs}<button type="submit">${escapeHtml(label)}</button></form>`;
}

/** What a test message says: who sent it from where, so nobody mistakes it for an agent's. */
export const TEST_TITLE = 'Switchboard test message';

function channelRows(
  channels: readonly { name: string; type: string }[],
  endpoints: ReadonlyMap<string, { breaker: string; disabled: boolean }>,
  csrf: string | null,
): string[][] {
  return channels.map((ch) => {
    const ep = endpoints.get(ch.name);
    return [
      `<a href="/console/deliveries?destination=${encodeURIComponent(ch.name)}">${escapeHtml(ch.name)}</a>`,
      escapeHtml(ch.type),
      ep ? badge(ep.disabled ? 'disabled' : ep.breaker) : '<span class="mute">never tried</span>',
      `<form class="inline" method="post" action="/console/deliveries/test">${hidden(csrf)}<input type="hidden" name="destination" value="${escapeHtml(ch.name)}"><button type="submit">Send test</button></form>`,
    ];
  });
}

function deliveryRows(list: readonly DeliveryView[], now: number, csrf: string | null): string[][] {
  return list.map((d) => [
    link('/console/deliveries/', d.id, idLabel(d.id)),
    escapeHtml(d.destination),
    escapeHtml(d.channel_type),
    badge(d.status),
    String(d.attempts),
    d.last_status === null ? '—' : String(d.last_status),
    d.last_error
      ? `<span title="${escapeHtml(d.last_error)}">${escapeHtml(d.last_error.slice(0, 60))}</span>`
      : '—',
    when(d.updated_at, now),
    endToEnd(d),
    d.status === 'dead' || d.status === 'reconcile' ? replayForm([d.id], csrf, 'Replay') : '',
  ]);
}

/** From queued to its outcome (every attempt and back-off included); each attempt's time is on its page. */
function endToEnd(d: DeliveryView): string {
  if (d.status !== 'succeeded' && d.status !== 'dead') return '<span class="mute">—</span>';
  const ms = Date.parse(d.updated_at) - Date.parse(d.created_at);
  return Number.isFinite(ms) && ms >= 0 ? escapeHtml(ms < 1000 ? `${ms} ms` : span(ms)) : '—';
}

export function deliveryPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const admin = guard(ctx, ADMIN);
  const port = () => need(ctx.deps.delivery, 'delivery', 'deliveries');

  r.get('/console/deliveries', admin, async (c) => {
    const delivery = port();
    const list = need(delivery.list?.bind(delivery), 'delivery', 'listing deliveries');
    const status = queryParam(c, 'status', /^[a-z]+$/) as (typeof STATUSES)[number] | undefined;
    if (status && !STATUSES.includes(status))
      throw new AppError('bad_request', `\`status\` is one of ${STATUSES.join(', ')}`);
    const destination = queryParam(c, 'destination', DESTINATION);
    const [found, endpoints, dead, reconcile] = await Promise.all([
      list({
        ...(status ? { status } : {}),
        ...(destination ? { destination } : {}),
        newestFirst: true,
        limit: SHOWN,
      }),
      delivery.endpoints?.() ?? Promise.resolve([]),
      list({ status: 'dead', limit: DLQ_READ }),
      list({ status: 'reconcile', limit: DLQ_READ }),
    ]);
    const now = ctx.deps.now();
    const csrf = c.get('session')?.csrf ?? null;
    const channels = delivery.channelList?.() ?? [];
    const byName = new Map(endpoints.map((e) => [e.destination, e]));
    const endpointRows = endpoints.map((e) => [
      `<a href="/console/deliveries?destination=${encodeURIComponent(e.destination)}">${escapeHtml(e.destination)}</a>`,
      badge(e.disabled ? 'disabled' : e.breaker),
      String(e.opens),
      when(e.open_until, now),
      when(e.updated_at, now),
    ]);
    const groups = groupDead(dead);
    const groupRows = groups.map((g) => [
      escapeHtml(g.destination),
      `<span title="${escapeHtml(g.error)}">${escapeHtml(g.error)}</span>`,
      String(g.ids.length),
      when(g.first, now),
      when(g.last, now),
      replayForm(g.ids, csrf, `Replay ${g.ids.length}`),
    ]);
    const filters = filterForm('/console/deliveries', [
      { name: 'status', label: 'Status', options: STATUSES, ...(status ? { value: status } : {}) },
      { name: 'destination', label: 'Destination', ...(destination ? { value: destination } : {}) },
    ]);
    const region = `<div id="live">
<section aria-labelledby="dlq-h"><h2 id="dlq-h">Dead letters <span class="n">${dead.length}</span></h2>
${table(['Destination', 'Error', 'Count', 'First', 'Last', ''], groupRows)}</section>
<section aria-labelledby="rec-h"><h2 id="rec-h">Reconcile queue <span class="n">${reconcile.length}</span> <small class="mute">sent, outcome unknown: check the channel before replaying</small></h2>
${table(['Delivery', 'Destination', 'Channel', 'Status', 'Attempts', 'HTTP', 'Error', 'Updated', 'Took', ''], deliveryRows(reconcile.slice(0, SHOWN), now, csrf))}</section>
<section aria-labelledby="ch-h"><h2 id="ch-h">Channels</h2>
${table(['Channel', 'Type', 'Breaker', ''], channelRows(channels, byName, csrf))}</section>
<section aria-labelledby="ep-h"><h2 id="ep-h">Endpoints</h2>
${table(['Destination', 'Breaker', 'Opens', 'Probe at', 'Updated'], endpointRows)}</section>
<section aria-labelledby="all-h"><h2 id="all-h">Deliveries <small class="mute">newest first</small></h2>
${filters}${table(['Delivery', 'Destination', 'Channel', 'Status', 'Attempts', 'HTTP', 'Error', 'Updated', 'Took', ''], deliveryRows(found, now, csrf))}</section>
</div>`;
    if (c.req.query('fragment') !== undefined) return fragment(c, region);
    return html(
      c,
      layout('Deliveries', await frame(c, ctx, 'deliveries', ['deliveries']), `${flash(notice(c))}${region}`),
    );
  });

  r.get('/console/deliveries/:id', admin, async (c) => {
    const delivery = port();
    const list = need(delivery.list?.bind(delivery), 'delivery', 'a delivery');
    const id = c.req.param('id');
    if (!DELIVERY_ID.test(id)) throw new AppError('not_found', `no delivery ${id.slice(0, 40)}`);
    const [d] = await list({ ids: [id], limit: 1 });
    if (!d) throw new AppError('not_found', `no delivery ${id}`);
    const events = await ctx.deps.log.list({
      correlationId: d.correlation_id,
      type: 'integration.delivery.*',
      limit: 1000,
    });
    const now = ctx.deps.now();
    const attempts = events
      .filter(
        (e) =>
          e.envelope.subject.resource_ref === d.id || e.envelope.redacted_summary['delivery_id'] === d.id,
      )
      .map(({ seq, envelope: e }) => {
        const s = e.redacted_summary;
        const num = (k: string) => (typeof s[k] === 'number' ? String(s[k]) : '—');
        const text = (k: string) => (typeof s[k] === 'string' ? escapeHtml(String(s[k]).slice(0, 200)) : '');
        return [
          `<a href="/console/events/${encodeURIComponent(e.event_id)}">#${seq}</a>`,
          when(e.occurred_at, now),
          `<code class="type">${escapeHtml(e.type.replace('integration.delivery.', ''))}</code>`,
          num('attempt'),
          num('status'),
          typeof s['duration_ms'] === 'number' ? `${s['duration_ms']} ms` : '—',
          [text('error'), text('reason'), text('body_excerpt')].filter(Boolean).join(' · ') || '—',
        ];
      });
    const csrf = c.get('session')?.csrf ?? null;
    const facts: [string, string][] = [
      ['Status', badge(d.status)],
      ['Destination', escapeHtml(d.destination)],
      ['Channel', escapeHtml(d.channel_type)],
      ['Attempts', String(d.attempts)],
      ['Next attempt', when(d.next_attempt_at, now)],
      ['Caused by', link('/console/events/', d.event_id)],
      ['Created', when(d.created_at, now)],
      ['Last error', escapeHtml(d.last_error ?? '—')],
      ['Last response', d.last_response ? escapeHtml(d.last_response.slice(0, 200)) : '—'],
    ];
    const replay = d.status === 'dead' || d.status === 'reconcile' ? replayForm([d.id], csrf, 'Replay') : '';
    const region = `<div id="live"><dl class="facts wide">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>${replay}
<h2>Attempts</h2>${table(['Event', 'When', 'Outcome', 'Attempt', 'HTTP', 'Took', 'Detail'], attempts)}
<p class="mute">${short(d.id, 40)}</p></div>`;
    if (c.req.query('fragment') !== undefined) return fragment(c, region);
    return html(
      c,
      layout(
        `Delivery to ${d.destination}`,
        await frame(c, ctx, 'deliveries', ['deliveries']),
        `${flash(notice(c))}${region}`,
      ),
    );
  });

  /**
   * A test message to one channel, through the delivery engine like any other (retries, breaker,
   * DLQ): an `agent.notification.sent` event marked `test`, and its delivery, in one transaction.
   */
  r.post('/console/deliveries/test', admin, async (c) => {
    const delivery = port();
    const { one } = fields(c.get('form'), ['destination']);
    const name = one.destination ?? '';
    const channel = (delivery.channelList?.() ?? []).find((ch) => ch.name === name);
    if (!channel) throw new AppError('not_found', `no channel named ${JSON.stringify(name.slice(0, 40))}`);
    const principal = c.get('principal');
    const id = await ctx.deps.db.tx(async (tx) => {
      const event = await ctx.deps.emit(
        {
          type: 'agent.notification.sent',
          actor: { user_id: principal.name },
          redacted_summary: { test: true, by: principal.name, destinations: [name], channel: channel.type },
        },
        tx,
      );
      const queued = await delivery.enqueue(tx, {
        eventId: event.event_id,
        destination: name,
        message: {
          kind: 'progress',
          stage: 'done',
          severity: 'info',
          title: TEST_TITLE,
          summary: `Sent from the console by ${principal.name}.`,
          eventId: event.event_id,
        },
      });
      return queued.id;
    });
    return done(c, `/console/deliveries/${encodeURIComponent(id)}`, 'test_sent', { id, destination: name });
  });

  r.post('/console/deliveries/replay', admin, async (c) => {
    const delivery = port();
    const replay = need(delivery.replay?.bind(delivery), 'delivery', 'replaying');
    const { many } = fields(c.get('form'), [], ['ids']);
    const ids = [...new Set(many.ids)];
    if (ids.length === 0) throw new AppError('bad_request', 'name the deliveries to replay (ids)');
    if (ids.length > DLQ_READ) throw new AppError('bad_request', `at most ${DLQ_READ} deliveries at once`);
    const bad = ids.find((id) => !DELIVERY_ID.test(id));
    if (bad) throw new AppError('bad_request', `not a delivery id: ${bad.slice(0, 40)}`);
    const result = await replay({ ids });
    if (result.replayed.length === 0)
      throw new AppError(
        'conflict',
        `nothing was replayed: ${result.refused
          .slice(0, 3)
          .map((x) => `${x.id}: ${x.reason}`)
          .join('; ')}`,
      );
    return done(c, '/console/deliveries', 'replayed', result as unknown as Record<string, unknown>);
  });
}
