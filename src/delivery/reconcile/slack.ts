import { isRecord, parseJson } from '../../channels/http.js';
import { SLACK_API_URL, SLACK_METADATA_EVENT_TYPE } from '../../channels/slack/format.js';
import type { Finding, Lookup } from './lookup.js';

/**
 * Slack: `conversations.history` of the channel from a minute before the delivery was made, looking for
 * the message whose metadata names the delivery's event (chat.postMessage sends
 * `metadata: { event_type: "switchboard_message", event_payload: { event_id } }` in token mode, and
 * `include_all_metadata=true` returns it). Found → its `ts`; the whole window read without it → absent.
 * Incoming webhooks have no read API: a person decides.
 */

/** Pages of 200 read at most; a busier channel than that in the window is left to a person. */
const MAX_PAGES = 5;
const PAGE = 200;
const WINDOW_BEFORE_MS = 60_000;

const RETRYABLE = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/** The Web API base of the configured `api_url` (tests, Slack-compatible servers) or Slack's. */
export function slackMethodUrl(apiUrl: string | undefined, method: string): string {
  const post = apiUrl ?? SLACK_API_URL;
  return post.replace(/\/chat\.postMessage\/?$/, '') === post
    ? new URL(method, post.endsWith('/') ? post : `${post}/`).toString()
    : post.replace(/chat\.postMessage\/?$/, method);
}

export const slackLookup: Lookup = async (row, config, deps) => {
  const tokenEnv = typeof config['token_env'] === 'string' ? config['token_env'] : undefined;
  const channel = typeof config['channel'] === 'string' ? config['channel'] : undefined;
  if (!tokenEnv || !channel)
    return { kind: 'unsettled', why: 'slack: an incoming webhook cannot be read back (a bot token_env can)' };
  const token = deps.secret(tokenEnv);
  if (!token) return { kind: 'unsettled', why: `slack: environment variable ${tokenEnv} is not set` };
  const base = slackMethodUrl(
    typeof config['api_url'] === 'string' ? config['api_url'] : undefined,
    'conversations.history',
  );
  const oldest = (Math.max(0, Number(row.created_at) - WINDOW_BEFORE_MS) / 1000).toFixed(6);
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const q = new URLSearchParams({
      channel,
      oldest,
      inclusive: 'true',
      limit: String(PAGE),
      include_all_metadata: 'true',
      ...(cursor ? { cursor } : {}),
    });
    const res = await deps.get(`${base}?${q}`, { authorization: `Bearer ${token}` });
    if (res.status === undefined)
      return { kind: 'retry', error: `slack history: ${res.error ?? 'no answer'}` };
    const body = parseJson(res.body);
    if (!isRecord(body) || typeof body['ok'] !== 'boolean')
      return res.status >= 500 || res.status === 429
        ? { kind: 'retry', error: `slack history: HTTP ${res.status}` }
        : { kind: 'unsettled', why: `slack history: not a Slack answer (HTTP ${res.status})` };
    if (body['ok'] !== true) {
      const error = String(body['error'] ?? 'unknown');
      if (res.status === 429 || RETRYABLE.has(error))
        return { kind: 'retry', error: `slack history: ${error}` };
      // missing_scope (channels:history / groups:history), not_in_channel, invalid_auth: a person.
      return { kind: 'unsettled', why: `slack history: ${error}` };
    }
    const found = findMessage(body['messages'], row.event_id);
    if (found) return found;
    const next = isRecord(body['response_metadata']) ? body['response_metadata']['next_cursor'] : undefined;
    if (body['has_more'] !== true || typeof next !== 'string' || next === '') return { kind: 'absent' };
    cursor = next;
  }
  return {
    kind: 'unsettled',
    why: `slack history: more than ${MAX_PAGES * PAGE} messages since it was sent`,
  };
};

function findMessage(messages: unknown, eventId: string): Finding | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (const m of messages) {
    if (!isRecord(m) || !isRecord(m['metadata'])) continue;
    const md = m['metadata'];
    const payload = isRecord(md['event_payload']) ? md['event_payload'] : undefined;
    if (md['event_type'] === SLACK_METADATA_EVENT_TYPE && payload?.['event_id'] === eventId)
      return typeof m['ts'] === 'string' ? { kind: 'found', providerId: m['ts'] } : { kind: 'found' };
  }
  return undefined;
}
