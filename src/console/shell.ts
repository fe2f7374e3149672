import type { Principal, Role } from '../kernel/module.js';
import { escapeHtml } from '../web/page.js';

/**
 * The console's page shell: pure functions to HTML. Everything shown is escaped here or by the caller
 * with `escapeHtml`; nothing user- or agent-written is ever put in an attribute that navigates or runs
 * (no `href`, `src` or `on*` from data: links are built from ids, URL-encoded). Script and style come
 * from /console/assets, so the CSP allows no inline code at all.
 */

export { escapeHtml };

export type NavKey =
  | 'approvals'
  | 'tasks'
  | 'sessions'
  | 'events'
  | 'deliveries'
  | 'policy'
  | 'tools'
  | 'metrics';

const NAV: readonly { key: NavKey; label: string; href: string; roles: readonly Role[] }[] = [
  { key: 'approvals', label: 'Approvals', href: '/console/', roles: ['approver', 'admin'] },
  { key: 'tasks', label: 'Tasks', href: '/console/tasks', roles: ['approver', 'admin'] },
  { key: 'sessions', label: 'Sessions', href: '/console/sessions', roles: ['approver', 'admin'] },
  { key: 'events', label: 'Events', href: '/console/events', roles: ['admin'] },
  { key: 'deliveries', label: 'Deliveries', href: '/console/deliveries', roles: ['admin'] },
  { key: 'policy', label: 'Policy', href: '/console/policy', roles: ['admin'] },
  { key: 'tools', label: 'Tools', href: '/console/tools', roles: ['admin'] },
  { key: 'metrics', label: 'Metrics', href: '/console/metrics', roles: ['admin'] },
];

export function mayOpen(role: Role, key: NavKey): boolean {
  return NAV.find((n) => n.key === key)?.roles.includes(role) ?? false;
}

export interface Frame {
  principal: Principal;
  /** The session's CSRF token (null for a bearer-key request: its forms need none). */
  csrf: string | null;
  /** Pending approvals, for the tab title and the nav badge. */
  pending: number;
  active: NavKey | null;
  /** Relay topics that refresh this page's live region (`approvals`, `tasks`, `deliveries`). */
  live?: readonly string[];
  /** More of /console/assets this page loads, in order (the metrics page's chart library). */
  scripts?: readonly string[];
  styles?: readonly string[];
}

/** `(3) Approvals · Switchboard`: the count of pending approvals leads the tab title. */
export function tabTitle(title: string, pending: number): string {
  return `${pending > 0 ? `(${pending}) ` : ''}${title} · Switchboard`;
}

export function layout(title: string, frame: Frame, body: string): string {
  const nav = NAV.filter((n) => n.roles.includes(frame.principal.role))
    .map((n) => {
      const current = n.key === frame.active ? ' aria-current="page"' : '';
      const badge =
        n.key === 'approvals'
          ? ` <span class="count" id="pending-count"${frame.pending > 0 ? '' : ' hidden'}>${frame.pending}</span>`
          : '';
      return `<a href="${n.href}"${current}>${n.label}${badge}</a>`;
    })
    .join('');
  const csrf = frame.csrf ? `<meta name="csrf-token" content="${escapeHtml(frame.csrf)}">` : '';
  const live = frame.live?.length ? ` data-live="${escapeHtml(frame.live.join(' '))}"` : '';
  const styles = (frame.styles ?? [])
    .map((s) => `<link rel="stylesheet" href="/console/assets/${escapeHtml(s)}">\n`)
    .join('');
  const scripts = (frame.scripts ?? [])
    .map((s) => `<script defer src="/console/assets/${escapeHtml(s)}"></script>\n`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
${csrf}
<title>${escapeHtml(tabTitle(title, frame.pending))}</title>
${styles}<link rel="stylesheet" href="/console/assets/console.css">
<link rel="stylesheet" href="/console/assets/views.css">
<script type="module" src="/console/assets/console.js"></script>
${scripts}</head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="/console/">Switchboard</a>
<nav aria-label="Console">${nav}</nav>
<form class="who" method="post" action="/console/logout">${hidden(frame.csrf)}
<span>${escapeHtml(frame.principal.name)} <small>(${escapeHtml(frame.principal.role)})</small></span>
<button type="submit" class="link">Sign out</button></form>
</header>
<main id="main" tabindex="-1"${live} data-title="${escapeHtml(title)}">
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body></html>
`;
}

/** The page for a signed-out visitor (sign-in, errors before a session exists). */
export function bareLayout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)} · Switchboard</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="stylesheet" href="/console/assets/views.css">
</head><body class="bare">
<main id="main">
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body></html>
`;
}

/** The CSRF field every console form carries (none for a bearer-key request). */
export function hidden(csrf: string | null): string {
  return csrf ? `<input type="hidden" name="_csrf" value="${escapeHtml(csrf)}">` : '';
}

/** A table whose cells are already HTML (escaped by the caller); wrapped so it scrolls on a phone. */
export function table(headers: readonly string[], rows: readonly string[][], caption?: string): string {
  if (rows.length === 0) return '<p class="empty">Nothing here.</p>';
  const head = headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  // Each cell carries its column's name: on a phone the CSS shows rows as `name: value` lines.
  const labels = headers.map((h) => ` data-label="${escapeHtml(h)}"`);
  const body = rows
    .map((r) => `<tr>${r.map((cell, i) => `<td${labels[i] ?? ''}>${wrapCell(cell)}</td>`).join('')}</tr>`)
    .join('\n');
  return `<div class="scroll"><table>${caption ? `<caption>${escapeHtml(caption)}</caption>` : ''}
<thead><tr>${head}</tr></thead>
<tbody>
${body}
</tbody></table></div>`;
}

/**
 * A cell's content in one box: on a phone a cell is a grid of its label and its content, and a cell
 * of several parts (a badge and a note, a count and a time) would otherwise wrap part by part.
 */
function wrapCell(cell: string): string {
  return cell === '' ? '' : `<div class="cell">${cell}</div>`;
}

/** A state as a coloured word; the class is picked from a fixed list, never from the data. */
export function badge(state: string): string {
  const tone: Record<string, string> = {
    pending: 'warn',
    'input-required': 'warn',
    submitted: 'info',
    working: 'info',
    claimed: 'info',
    approved: 'ok',
    completed: 'ok',
    succeeded: 'ok',
    allow: 'ok',
    closed: 'ok',
    intact: 'ok',
    rejected: 'bad',
    failed: 'bad',
    dead: 'bad',
    deny: 'bad',
    open: 'bad',
    broken: 'bad',
    disabled: 'bad',
    expired: 'mute',
    canceled: 'mute',
    unknown: 'warn',
    reconcile: 'warn',
    require_approval: 'warn',
    defer: 'warn',
    modify: 'info',
    half_open: 'warn',
    stalled: 'warn',
    away: 'warn',
    'at desk': 'ok',
    ended: 'mute',
    active: 'info',
    read: 'ok',
    write: 'warn',
    admin: 'bad',
  };
  return `<span class="badge ${tone[state] ?? 'mute'}">${escapeHtml(state)}</span>`;
}

/** A time as the reader's clock would show it, with the exact instant on hover. */
export function when(iso: string | null | undefined, now: number): string {
  if (!iso) return '<span class="mute">—</span>';
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return escapeHtml(iso);
  return `<time datetime="${escapeHtml(iso)}" title="${escapeHtml(iso)}">${escapeHtml(ago(now - ms))}</time>`;
}

/** `42s ago`, `5m ago`, `3h ago`, `2d ago`; a time ahead says `in …`. */
export function ago(ms: number): string {
  const future = ms < 0;
  const text = span(Math.abs(ms));
  return future ? `in ${text}` : `${text} ago`;
}

export function span(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** JSON as an escaped, wrapped block, cut at `max` characters with a note. */
export function jsonBlock(value: unknown, max = 8000): string {
  let text = JSON.stringify(value, null, 2) ?? 'null';
  if (text.length > max) text = `${text.slice(0, max)}\n… (cut at ${max} characters)`;
  return `<pre class="json">${escapeHtml(text)}</pre>`;
}

/** An internal link from a path and an id: the id is URL-encoded, the label escaped. */
export function link(path: string, id: string, label = id): string {
  return `<a href="${escapeHtml(`${path}${encodeURIComponent(id)}`)}">${escapeHtml(label)}</a>`;
}

/**
 * An id as a table shows it: the prefix and the tail. A ULID's first ten characters are its time, so
 * ids made in one millisecond share them; the tail is what tells them apart.
 */
export function idLabel(id: string): string {
  const cut = id.indexOf('_');
  return id.length > cut + 1 + 9 ? `${id.slice(0, cut + 1)}…${id.slice(-8)}` : id;
}

/** A long id or digest shortened for a table, the whole value on hover. */
export function short(text: string | null | undefined, keep = 12): string {
  if (!text) return '<span class="mute">—</span>';
  const shown = text.length > keep + 1 ? `${text.slice(0, keep)}…` : text;
  return `<span title="${escapeHtml(text)}">${escapeHtml(shown)}</span>`;
}

/** A GET filter form: each field a labelled input, its current value kept. */
export function filterForm(
  action: string,
  inputs: readonly { name: string; label: string; value?: string; options?: readonly string[] }[],
): string {
  const controls = inputs
    .map((i) => {
      const id = `f-${i.name}`;
      const control = i.options
        ? `<select id="${id}" name="${i.name}"><option value="">any</option>${i.options
            .map(
              (o) =>
                `<option${o === i.value ? ' selected' : ''} value="${escapeHtml(o)}">${escapeHtml(o)}</option>`,
            )
            .join('')}</select>`
        : `<input id="${id}" name="${i.name}" value="${escapeHtml(i.value ?? '')}" autocomplete="off">`;
      return `<div class="field"><label for="${id}">${escapeHtml(i.label)}</label>${control}</div>`;
    })
    .join('');
  return `<form class="filters" method="get" action="${escapeHtml(action)}">${controls}<div class="field"><button type="submit">Filter</button></div></form>`;
}

/** A one-line notice above the page (`?done=…` after a form post). */
export function flash(text: string | undefined, tone: 'ok' | 'bad' = 'ok'): string {
  return text ? `<p class="flash ${tone}" role="status">${escapeHtml(text)}</p>` : '';
}
