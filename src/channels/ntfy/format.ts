import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message, Severity, Stage } from '../../notify/port.js';
import { envName, httpUrl, JSON_HEADERS, requireSecret } from '../http.js';
import { headline, labels, plainText, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

export const ntfyConfig = z.strictObject({
  type: z.literal('ntfy'),
  /** The server's root URL: JSON publishing goes to the root, the topic is in the body. */
  url: httpUrl,
  topic: z.string().regex(/^[-_A-Za-z0-9]{1,64}$/, 'ntfy topics are 1-64 of A-Z a-z 0-9 _ -'),
  token_env: envName.optional(),
});
export type NtfyConfig = z.infer<typeof ntfyConfig>;

/** ntfy's default message limit; a longer message silently becomes an attachment. */
export const NTFY_MAX_BYTES = 4096;
/** Titles are one line on a lock screen; longer ones are cut by the phone anyway. */
const TITLE_MAX = 250;

// 3 is ntfy's default; critical uses 5 (max), which rings through Do-Not-Disturb on Android.
const PRIORITY: Record<Severity, number> = { info: 3, warn: 4, critical: 5 };

const STAGE_TAG: Record<Stage, string> = {
  started: 'arrow_forward',
  progress: 'hourglass_flowing_sand',
  blocked: 'no_entry',
  awaiting_approval: 'raising_hand',
  done: 'white_check_mark',
  failed: 'x',
};
const SEVERITY_TAG: Record<Severity, string> = {
  info: 'information_source',
  warn: 'warning',
  critical: 'rotating_light',
};

type NtfyAction =
  | { action: 'view'; label: string; url: string; clear?: boolean }
  | { action: 'http'; label: string; url: string; method: 'POST'; clear: boolean };

export function formatNtfy(input: Message, config: NtfyConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const actions: NtfyAction[] = [];
  if (msg.actions) {
    // At most three actions (ntfy's limit): approve, reject, and the page for details.
    actions.push({
      action: 'http',
      label: l.approve,
      url: msg.actions.approveUrl,
      method: 'POST',
      clear: true,
    });
    actions.push({
      action: 'http',
      label: l.reject,
      url: msg.actions.rejectUrl,
      method: 'POST',
      clear: true,
    });
    actions.push({ action: 'view', label: l.open, url: msg.actions.pageUrl });
  }
  // ntfy takes at most three actions; an approval's three come first.
  if (msg.reply && actions.length < 3) actions.push({ action: 'view', label: l.reply, url: msg.reply.url });
  const body: Record<string, unknown> = {
    topic: config.topic,
    title: truncate(headline(msg), TITLE_MAX, 'chars'),
    message: plainText(msg, NTFY_MAX_BYTES, 'bytes', { headline: false, links: false }),
    priority: PRIORITY[msg.severity],
    tags: [SEVERITY_TAG[msg.severity], STAGE_TAG[msg.stage]],
  };
  const click = msg.actions?.pageUrl ?? msg.artifact;
  if (click) body['click'] = click;
  if (actions.length > 0) body['actions'] = actions;
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (config.token_env) headers['authorization'] = `Bearer ${requireSecret(ctx, config.token_env)}`;
  return { url: config.url.replace(/\/+$/, '') + '/', headers, body: JSON.stringify(body) };
}
