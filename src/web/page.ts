import { createHash } from 'node:crypto';

/**
 * The shell every phone page shares (the approval page, the reply page): pure functions to HTML.
 * Everything shown is escaped; a page loads nothing (no image, no font, no script but its own inline
 * one, allowed by its hash), and its CSP forbids it anyway. Forms post back to the same origin only.
 */

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/**
 * The headers of a page that runs one inline script of its own: the CSP allows exactly that script,
 * by its hash, and still nothing loaded from anywhere.
 */
export function pageHeadersWithScript(script: string): Record<string, string> {
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  return {
    ...PAGE_HEADERS,
    'content-security-policy': `${PAGE_HEADERS['content-security-policy']}; script-src 'sha256-${hash}'`,
  };
}

/**
 * Shows each `<time data-local>` in the viewer's own time zone and each `[data-until]` as "in 4 min":
 * the server cannot know the phone's zone, and its render (UTC, minutes left) stays when scripts are off.
 */
export const LOCAL_TIME_SCRIPT = `for(const t of document.querySelectorAll('time[data-local]')){const d=new Date(t.dateTime);if(!isNaN(d))t.textContent=d.toLocaleString([],{dateStyle:'medium',timeStyle:'short'})}
for(const t of document.querySelectorAll('[data-until]')){const ms=Date.parse(t.dataset.until)-Date.now();const m=Math.round(ms/60000);t.textContent=ms<=0?'expired':m<1?'in less than a minute':m<60?'in '+m+' min':'in '+Math.floor(m/60)+' h '+(m%60)+' min'}`;

/** "in 4 min" for `until` seen at `now` (the page's text before, or without, its script). */
export function relativeUntil(until: number, now: number): string {
  const ms = until - now;
  const m = Math.round(ms / 60_000);
  if (ms <= 0) return 'expired';
  if (m < 1) return 'in less than a minute';
  return m < 60 ? `in ${m} min` : `in ${Math.floor(m / 60)} h ${m % 60} min`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * Escaped title, no external load. `css` adds the page's own rules to the common ones; `script` is
 * the page's one inline script (serve it with `pageHeadersWithScript(script)`).
 */
export function pageLayout(title: string, body: string, css = '', script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:36rem;margin:1.5rem auto;padding:0 1rem;line-height:1.4;overflow-wrap:anywhere}
dt{font-weight:600;margin-top:.5rem} dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
${css}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
${body}
${
  script
    ? `<script>${script}</script>
`
    : ''
}</body></html>
`;
}

/** Markup the caller built from escaped parts (a `<time>` element), shown as it is. */
export interface Markup {
  html: string;
}

/** The label/value list at the top of a page, each side escaped (a `Markup` value is already). */
export function definitionList(rows: readonly (readonly [string, string | Markup])[]): string {
  const list = rows
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${typeof v === 'string' ? escapeHtml(v) : v.html}</dd>`)
    .join('\n');
  return `<dl>
${list}
</dl>`;
}
