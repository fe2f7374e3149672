import { afterEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, NOW, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { slack } from './index.js';

type Block = { type: string; text?: { type: string; text: string }; elements?: Record<string, unknown>[] };
const blocks = (r: HttpRequest) => JSON.parse(r.body).blocks as Block[];
const HOOK_PATH = '/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX';
const BOT_TOKEN = 'xoxb-1111-2222-abcdefghijklmnop';

channelCase({
  kind: slack,
  rawConfig: { type: 'slack', url_env: 'SLACK_HOOK' },
  rawMentionConfig: { type: 'slack', url_env: 'SLACK_HOOK', mention_user_id: 'U024BE7LH' },
  secrets: { SLACK_HOOK: `https://hooks.slack.com${HOOK_PATH}` },
  text: (r) => String(blocks(r)[1]?.text?.text),
  wire: (r) => r.body,
  buttons: (r) => {
    const actions = blocks(r).find((b) => b.type === 'actions')?.elements ?? [];
    const [a, b] = actions;
    return a && b ? { approve: String(a['url']), reject: String(b['url']) } : undefined;
  },
  mentions: (r) => r.body.includes('<@U024BE7LH>'),
  responses: {
    ok: response(200, 'ok'),
    business: response(200, { ok: false, error: 'channel_not_found' }),
    businessExpect: 'dead',
    rateLimited: response(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '30' }),
    rateLimitedRetryAfterMs: 30_000,
    serverError: response(503, { ok: false, error: 'service_unavailable' }),
  },
});

/** Block Kit limits Slack enforces (invalid_blocks otherwise): ≤50 blocks, header ≤150, section ≤3000, button text ≤75, value ≤2000. */
function blockKitError(body: { text?: string; blocks?: Block[] }): string | undefined {
  if (!body.text && !body.blocks) return 'no_text';
  const bs = body.blocks ?? [];
  if (bs.length > 50) return 'invalid_blocks';
  for (const b of bs) {
    if (b.type === 'header' && (b.text?.type !== 'plain_text' || b.text.text.length > 150))
      return 'invalid_blocks';
    if (b.type === 'section' && (b.text?.text.length ?? 0) > 3000) return 'invalid_blocks';
    if (b.type === 'actions') {
      const ids = new Set<string>();
      for (const e of b.elements ?? []) {
        const text = e['text'] as { text: string };
        if (e['type'] !== 'button' || text.text.length > 75 || String(e['value'] ?? '').length > 2000)
          return 'invalid_blocks';
        if (ids.has(String(e['action_id']))) return 'invalid_blocks';
        ids.add(String(e['action_id']));
      }
    }
  }
  return undefined;
}

function slackServer(req: ReceivedRequest): Answer {
  const body = JSON.parse(req.body);
  if (req.url === HOOK_PATH) {
    const err = blockKitError(body);
    return err
      ? { status: 400, body: err, headers: { 'content-type': 'text/html' } }
      : { status: 200, body: 'ok', headers: { 'content-type': 'text/html' } };
  }
  if (req.url === '/api/chat.postMessage') {
    if (req.headers['authorization'] !== `Bearer ${BOT_TOKEN}`)
      return json(200, { ok: false, error: 'invalid_auth' });
    if (body.channel === 'C_BUSY')
      return json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '2' });
    if (body.channel !== 'C1234567890') return json(200, { ok: false, error: 'channel_not_found' });
    const err = blockKitError(body);
    return err
      ? json(200, { ok: false, error: err })
      : json(200, { ok: true, channel: body.channel, ts: '1503435956.000247' });
  }
  return { status: 404, body: 'no_service' };
}

describe('Slack against a local Slack stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const deps = {
    post: fetchPost,
    now: () => NOW,
    secret: (e: string) => ({ SLACK_HOOK: `${rx.url}${HOOK_PATH}`, SLACK_BOT: BOT_TOKEN })[e],
  };

  it('posts Block Kit with approve and reject buttons to an incoming webhook', async () => {
    rx = await startReceiver(slackServer);
    const config = slack.configSchema.parse({ type: 'slack', url_env: 'SLACK_HOOK' });
    expect(await slack.send(approvalMessage({ detail: 'y'.repeat(10_000) }), config, deps)).toEqual({
      kind: 'ok',
    });
  });

  it('sends action ids without links when interactivity reaches the gateway', async () => {
    rx = await startReceiver(slackServer);
    const config = slack.configSchema.parse({
      type: 'slack',
      token_env: 'SLACK_BOT',
      channel: 'C1234567890',
      api_url: `${rx.url}/api/chat.postMessage`,
      interactive: true,
    });
    expect(await slack.send(approvalMessage(), config, deps)).toEqual({
      kind: 'ok',
      providerId: '1503435956.000247',
    });
    const actions = JSON.parse(rx.requests[0]?.body ?? '{}').blocks[2].elements;
    expect(actions.map((e: Record<string, unknown>) => [e['action_id'], e['value'], e['url']])).toEqual([
      ['switchboard_approve', 'apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V', undefined],
      ['switchboard_reject', 'apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V', undefined],
    ]);
  });

  it('treats ok:false inside HTTP 200 as dead and a 429 as retry after Retry-After', async () => {
    rx = await startReceiver(slackServer);
    const api = `${rx.url}/api/chat.postMessage`;
    const lost = slack.configSchema.parse({
      type: 'slack',
      token_env: 'SLACK_BOT',
      channel: 'C_GONE',
      api_url: api,
    });
    expect(await slack.send(sampleMessage(), lost, deps)).toEqual({
      kind: 'dead',
      reason: 'slack: channel_not_found',
    });
    const busy = slack.configSchema.parse({
      type: 'slack',
      token_env: 'SLACK_BOT',
      channel: 'C_BUSY',
      api_url: api,
    });
    expect(await slack.send(sampleMessage(), busy, deps)).toEqual({
      kind: 'retry',
      error: 'slack: ratelimited',
      retryAfterMs: 2000,
    });
  });

  it('escapes the agent’s own <@U…> and <https://…|…> markup', () => {
    const config = slack.configSchema.parse({ type: 'slack', url: 'https://hooks.slack.com/services/T/B/X' });
    const req = slack.format(
      sampleMessage({ summary: 'ping <@U999> and <https://evil.example|docs>' }),
      config,
      { now: NOW, secret: () => undefined },
    );
    expect(req.body).not.toContain('<@U999>');
    expect(req.body).toContain('&lt;@U999&gt;');
  });
});
