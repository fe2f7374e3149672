import {
  definitionList,
  escapeHtml,
  LOCAL_TIME_SCRIPT,
  type Markup,
  pageLayout,
  relativeUntil,
} from '../web/page.js';
import { prefix } from '../text/index.js';

/** The approval page for signed links, in the shared phone-page shell (src/web/page.ts). */

/** How much of the plan input the page shows; the digest names the whole plan. */
const PLAN_SHOWN_MAX = 4000;

const APPROVAL_CSS = `pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.5rem;font-size:.85rem}
button{font-size:1.1rem;padding:.7rem 1.4rem;margin:.3rem .5rem .3rem 0;border-radius:.4rem;border:1px solid #888}
.approve{background:#1a7f37;color:#fff} .reject{background:#cf222e;color:#fff}
label{display:block;margin-top:1rem;font-weight:600}
textarea{display:block;width:100%;box-sizing:border-box;font:inherit;margin:.3rem 0 .6rem;padding:.4rem}`;

/** What a comment may hold: the decision API's own cap. */
export const COMMENT_MAX_CHARS = 2000;

function layout(title: string, body: string, script = ''): string {
  return pageLayout(title, body, APPROVAL_CSS, script);
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

/**
 * When it expires, for a person on a phone: the time in their own zone (the script rewrites the UTC
 * fallback) and how long is left ("in 4 min", kept current by the script at load).
 */
function expiry(expiresAt: string, now: number): Markup {
  const iso = escapeHtml(expiresAt);
  const utc = escapeHtml(expiresAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC'));
  const left = escapeHtml(relativeUntil(Date.parse(expiresAt), now));
  return {
    html: `<time datetime="${iso}" data-local>${utc}</time> (<span data-until="${iso}">${left}</span>)`,
  };
}

/**
 * The confirmation page: what is asked (line breaks of the reason kept), when it expires, a comment
 * box, and two buttons that POST back to the same URL.
 */
export function confirmationPage(a: PageApproval, now: number): string {
  let plan = JSON.stringify(a.plan.input, null, 2);
  if (plan.length > PLAN_SHOWN_MAX)
    plan = `${prefix(plan, PLAN_SHOWN_MAX)}\n… (truncated; the digest covers all of it)`;
  const rows: [string, string | Markup][] = [
    ['Action', a.action],
    ['Reason', a.reason],
    ['Tool', a.plan.tool],
    ...(a.plan.resource ? ([['Resource', a.plan.resource]] as [string, string][]) : []),
    ['Asked by', a.requested_by],
    ...(a.task_id ? ([['Task', a.task_id]] as [string, string][]) : []),
    ['Expires', expiry(a.expires_at, now)],
    ['Plan digest', a.plan_digest],
  ];
  return layout(
    'Approval requested',
    `${definitionList(rows)}
<p>Input:</p>
<pre>${escapeHtml(plan)}</pre>
<form method="post">
<label for="comment">Comment (optional; the agent reads it, e.g. why you reject)</label>
<textarea id="comment" name="comment" rows="3" maxlength="${COMMENT_MAX_CHARS}"></textarea>
<button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="reject" type="submit" name="decision" value="reject">Reject</button>
</form>
<p><small>${escapeHtml(a.id)}</small></p>`,
    LOCAL_TIME_SCRIPT,
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
