import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message } from '../../notify/port.js';
import { envName, httpUrl, JSON_HEADERS, requireSecret, urlOrEnv } from '../http.js';
import { contextLines, fitText, headline, labels, linkLines, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

/** chat.postMessage; overridable for Slack-compatible servers and tests. */
export const SLACK_API_URL = 'https://slack.com/api/chat.postMessage';

export const slackConfig = z
  .strictObject({
    type: z.literal('slack'),
    /** Incoming webhook (`https://hooks.slack.com/services/…`, a secret URL) … */
    ...urlOrEnv,
    /** … or a bot token (`xoxb-…`) and a channel, through chat.postMessage. */
    token_env: envName.optional(),
    channel: z.string().min(1).optional(),
    api_url: httpUrl.optional(),
    /**
     * With Slack interactivity configured to reach the gateway, buttons carry only action ids and
     * the click comes back signed (`X-Slack-Signature`); without it, buttons open the signed links.
     */
    interactive: z.boolean().optional(),
    /** Slack user id (`U…`) of the owner, mentioned on critical messages only. */
    mention_user_id: z
      .string()
      .regex(/^[UW][A-Z0-9]+$/)
      .optional(),
  })
  .refine((c) => [c.url, c.url_env, c.token_env].filter((v) => v !== undefined).length === 1, {
    message: 'set exactly one of url, url_env (incoming webhook) or token_env (chat.postMessage)',
  })
  .refine((c) => c.token_env === undefined || c.channel !== undefined, {
    message: 'token_env needs channel',
  });
export type SlackConfig = z.infer<typeof slackConfig>;

/**
 * Message metadata's event type: in token mode each message names its event, so the reconciler can
 * find it in `conversations.history` after a send whose answer never came (src/delivery/reconcile).
 */
export const SLACK_METADATA_EVENT_TYPE = 'switchboard_message';

/** Block Kit: a section's text is at most 3000 characters. */
export const SLACK_SECTION_MAX_CHARS = 3000;
const HEADER_MAX_CHARS = 150; // Block Kit header limit
const FALLBACK_MAX_CHARS = 300; // the push notification shows a line or two of it
export const SLACK_APPROVE_ACTION = 'switchboard_approve';
export const SLACK_REJECT_ACTION = 'switchboard_reject';
export const SLACK_REPLY_ACTION = 'switchboard_reply';

/** mrkdwn control characters; escaping them also disarms `<!channel>` and `<@U…>` written by the agent. */
export const slackEscape = (t: string) =>
  t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function formatSlack(input: Message, config: SlackConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const l = labels(msg.locale);
  const interactive = config.interactive === true;
  const mention = msg.mention && config.mention_user_id ? `<@${config.mention_user_id}> ` : '';
  const tail = [...contextLines(msg), ...(msg.actions && !interactive ? [] : linkLines(msg))].map(
    slackEscape,
  );
  const room = SLACK_SECTION_MAX_CHARS - mention.length;
  const sectionText =
    mention +
    fitText(slackEscape(msg.summary), msg.detail && slackEscape(msg.detail), tail.join('\n'), room, 'chars');
  const blocks: unknown[] = [
    {
      type: 'header',
      text: { type: 'plain_text', text: truncate(headline(msg), HEADER_MAX_CHARS, 'chars') },
    },
    { type: 'section', text: { type: 'mrkdwn', text: sectionText } },
  ];
  if (msg.actions) {
    const a = msg.actions;
    const btn = (text: string, actionId: string, style: 'primary' | 'danger', url: string) => ({
      type: 'button',
      text: { type: 'plain_text', text },
      action_id: actionId,
      value: a.approvalId,
      style,
      ...(interactive ? {} : { url }),
    });
    blocks.push({
      type: 'actions',
      block_id: `approval_${a.approvalId}`,
      elements: [
        btn(l.approve, SLACK_APPROVE_ACTION, 'primary', a.approveUrl),
        btn(l.reject, SLACK_REJECT_ACTION, 'danger', a.rejectUrl),
      ],
    });
  }
  if (msg.reply) {
    // A link button: Slack opens the reply page; with interactivity on, the click also arrives and is ignored.
    blocks.push({
      type: 'actions',
      block_id: 'switchboard_reply',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: l.reply },
          action_id: SLACK_REPLY_ACTION,
          url: msg.reply.url,
        },
      ],
    });
  }
  // `text` is the notification and screen-reader fallback when blocks are present.
  const body: Record<string, unknown> = {
    text: slackEscape(truncate(`${headline(msg)}: ${msg.summary}`, FALLBACK_MAX_CHARS, 'chars')),
    blocks,
  };
  const headers: Record<string, string> = { ...JSON_HEADERS };
  let url: string;
  if (config.token_env !== undefined) {
    body['channel'] = config.channel;
    body['metadata'] = { event_type: SLACK_METADATA_EVENT_TYPE, event_payload: { event_id: msg.eventId } };
    headers['authorization'] = `Bearer ${requireSecret(ctx, config.token_env)}`;
    url = config.api_url ?? SLACK_API_URL;
  } else {
    url = config.url ?? requireSecret(ctx, config.url_env ?? '');
  }
  return { url, headers, body: JSON.stringify(body) };
}
