/**
 * The shell every phone page shares (the approval page, the reply page): pure functions to HTML.
 * Everything shown is escaped; a page loads nothing (no script, no image, no font), and its CSP
 * forbids it anyway. Forms post back to the same origin only.
 */

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Escaped title, no script, no external load. `css` adds the page's own rules to the common ones. */
export function pageLayout(title: string, body: string, css = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:36rem;margin:1.5rem auto;padding:0 1rem;line-height:1.4}
dt{font-weight:600;margin-top:.5rem} dd{margin:0}
${css}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

/** The label/value list at the top of a page, each side escaped. */
export function definitionList(rows: readonly (readonly [string, string])[]): string {
  const list = rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('\n');
  return `<dl>
${list}
</dl>`;
}
