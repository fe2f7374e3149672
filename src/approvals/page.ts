/**
 * The phone page for signed links: pure functions from what is asked to HTML. Everything shown is
 * escaped; the page loads nothing (no script, no image, no font), and its CSP forbids it anyway.
 */

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/** How much of the plan input the page shows; the digest names the whole plan. */
const PLAN_SHOWN_MAX = 4000;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * The shell every phone page shares (approval, reply): escaped title, no script, no external load.
 * `css` adds the page's own rules to the common ones.
 */
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

const APPROVAL_CSS = `pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.5rem;font-size:.85rem}
button{font-size:1.1rem;padding:.7rem 1.4rem;margin:.3rem .5rem .3rem 0;border-radius:.4rem;border:1px solid #888}
.approve{background:#1a7f37;color:#fff} .reject{background:#cf222e;color:#fff}`;

function layout(title: string, body: string): string {
  return pageLayout(title, body, APPROVAL_CSS);
}

export interface PageApproval {
  id: string;
  action: string;
  reason: string;
  plan_digest: string;
  plan: { tool: string; input: Record<string, unknown>; action?: string; resource?: string };
  requested_by: string;
  task_id: string | null;
  expires_at: string;
}

/** The confirmation page: what is asked, and two buttons that POST back to the same URL. */
export function confirmationPage(a: PageApproval): string {
  let plan = JSON.stringify(a.plan.input, null, 2);
  if (plan.length > PLAN_SHOWN_MAX)
    plan = `${plan.slice(0, PLAN_SHOWN_MAX)}\n… (truncated; the digest covers all of it)`;
  const rows: [string, string][] = [
    ['Action', a.action],
    ['Reason', a.reason],
    ['Tool', a.plan.tool],
    ...(a.plan.resource ? ([['Resource', a.plan.resource]] as [string, string][]) : []),
    ['Asked by', a.requested_by],
    ...(a.task_id ? ([['Task', a.task_id]] as [string, string][]) : []),
    ['Expires', a.expires_at],
    ['Plan digest', a.plan_digest],
  ];
  const list = rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('\n');
  return layout(
    'Approval requested',
    `<dl>
${list}
</dl>
<p>Input:</p>
<pre>${escapeHtml(plan)}</pre>
<form method="post">
<button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="reject" type="submit" name="decision" value="reject">Reject</button>
</form>
<p><small>${escapeHtml(a.id)}</small></p>`,
  );
}

export type NoticeKind = 'approved' | 'rejected' | 'already_decided' | 'expired' | 'invalid' | 'bad_request';

/** A one-message page: the result of a decision, or why nothing happened. */
export function noticePage(kind: NoticeKind, detail = ''): string {
  const titles: Record<NoticeKind, [string, string]> = {
    approved: ['Approved', 'The approval was granted. You can close this page.'],
    rejected: ['Rejected', 'The approval was rejected. You can close this page.'],
    already_decided: ['Already decided', 'This approval was already decided; nothing was changed.'],
    expired: ['Expired', 'This approval expired before it was decided; nothing was changed.'],
    invalid: ['Invalid link', 'This link is not valid. Nothing was changed.'],
    bad_request: ['Bad request', 'Choose Approve or Reject on the approval page.'],
  };
  const [title, text] = titles[kind];
  return layout(title, `<p>${escapeHtml(text)}</p>${detail ? `<p>${escapeHtml(detail)}</p>` : ''}`);
}
