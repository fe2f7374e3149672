import { definitionList, escapeHtml, pageLayout } from '../web/page.js';

/** The reply page, in the shared phone-page shell (src/web/page.ts): what the reply is about, to HTML. */

const REPLY_CSS = `textarea{width:100%;box-sizing:border-box;font:inherit;min-height:8rem;padding:.5rem}
button{font-size:1.1rem;padding:.7rem 1.4rem;margin:.5rem 0;border-radius:.4rem;border:1px solid #888;background:#0969da;color:#fff}`;

function layout(title: string, body: string): string {
  return pageLayout(title, body, REPLY_CSS);
}

export interface PageTask {
  id: string;
  title: string;
  expires_at: string;
  max_chars: number;
}

/** The form: one textarea that POSTs back to the same URL. */
export function replyPage(t: PageTask): string {
  const rows: [string, string][] = [
    ['Task', t.title === t.id ? t.id : `${t.title} (${t.id})`],
    ['Link expires', t.expires_at],
  ];
  return layout(
    'Reply to the agent',
    `${definitionList(rows)}
<form method="post">
<p><label for="message">Your reply continues the agent's session. It is passed to the agent as text, never run as a command.</label></p>
<textarea id="message" name="message" required maxlength="${t.max_chars}"></textarea>
<button type="submit">Send reply</button>
</form>
<p><small>This link works once.</small></p>`,
  );
}

export type ReplyNotice =
  | 'resumed'
  | 'refused'
  | 'used'
  | 'expired'
  | 'invalid'
  | 'bad_request'
  | 'too_large';

/** A one-message page: what became of the reply, or why nothing happened. */
export function replyNotice(kind: ReplyNotice, detail = ''): string {
  const titles: Record<ReplyNotice, [string, string]> = {
    resumed: ['Reply sent', 'The agent resumed its session with your reply. You can close this page.'],
    refused: [
      'Not sent',
      'The task cannot take a reply right now; nothing was changed. You can try this link again later.',
    ],
    used: ['Already used', 'This reply link was already used; nothing was changed.'],
    expired: ['Expired', 'This reply link expired; nothing was changed.'],
    invalid: ['Invalid link', 'This link is not valid. Nothing was changed.'],
    bad_request: ['Bad request', 'Type a reply in the box on the reply page and send it.'],
    too_large: ['Too long', 'The reply is too long; nothing was changed.'],
  };
  const [title, text] = titles[kind];
  return layout(title, `<p>${escapeHtml(text)}</p>${detail ? `<p>${escapeHtml(detail)}</p>` : ''}`);
}
