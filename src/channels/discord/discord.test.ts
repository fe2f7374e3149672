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
import { discord } from './index.js';

const HOOK = '/api/webhooks/1180000000000000000/aBcDeFgHiJkLmNoPqRsTuVwXyZ';
const embed = (r: HttpRequest) => JSON.parse(r.body).embeds[0] as Record<string, unknown>;

channelCase({
  kind: discord,
  rawConfig: { type: 'discord', url_env: 'DISCORD_HOOK' },
  rawMentionConfig: { type: 'discord', url_env: 'DISCORD_HOOK', mention_user_id: '80351110224678912' },
  secrets: { DISCORD_HOOK: `https://discord.com${HOOK}` },
  text: (r) => String(embed(r)['description']),
  wire: (r) => r.body,
  mentions: (r) =>
    (JSON.parse(r.body).allowed_mentions.users as string[]).length > 0 &&
    r.body.includes('<@80351110224678912>'),
  responses: {
    ok: response(200, { id: '1180000000000000001', type: 0, channel_id: '1' }),
    business: response(404, { message: 'Unknown Webhook', code: 10015 }),
    businessExpect: 'dead',
    rateLimited: response(
      429,
      { message: 'You are being rate limited.', retry_after: 0.314, global: false },
      { 'retry-after': '1' },
    ),
    rateLimitedRetryAfterMs: 314,
    serverError: response(502, '<html>502</html>'),
  },
});

/** Execute Webhook limits: content ≤2000, ≤10 embeds, title ≤256, description ≤4096, embed total ≤6000. */
function discordServer(req: ReceivedRequest): Answer {
  const url = new URL(req.url, 'http://x');
  if (url.pathname !== HOOK) return json(404, { message: 'Unknown Webhook', code: 10015 });
  const m = JSON.parse(req.body) as { content?: string; embeds?: Record<string, unknown>[] };
  const embeds = m.embeds ?? [];
  const size = (e: Record<string, unknown>) =>
    String(e['title'] ?? '').length +
    String(e['description'] ?? '').length +
    String((e['footer'] as { text?: string })?.text ?? '').length;
  const bad =
    (!m.content && embeds.length === 0) ||
    (m.content?.length ?? 0) > 2000 ||
    embeds.length > 10 ||
    embeds.some(
      (e) =>
        String(e['title'] ?? '').length > 256 ||
        String(e['description'] ?? '').length > 4096 ||
        size(e) > 6000,
    );
  if (bad) return json(400, { message: 'Invalid Form Body', code: 50035, errors: {} });
  if (embeds[0]?.['title'] === 'Progress · slow down') {
    return json(
      429,
      { message: 'You are being rate limited.', retry_after: 1.5, global: false },
      { 'retry-after': '2' },
    );
  }
  if (url.searchParams.get('wait') !== 'true') return { status: 204, body: '' };
  return json(200, { id: '1180000000000000001', type: 0, content: m.content ?? '', embeds });
}

describe('Discord against a local Discord stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const config = discord.configSchema.parse({ type: 'discord', url_env: 'DISCORD_HOOK' });
  const deps = () => ({ post: fetchPost, now: () => NOW, secret: () => `${rx.url}${HOOK}` });

  it('executes the webhook with wait=true and gets the message id back', async () => {
    rx = await startReceiver(discordServer);
    const res = await discord.send(approvalMessage({ detail: 'z'.repeat(9000) }), config, deps());
    expect(res).toEqual({ kind: 'ok', providerId: '1180000000000000001' });
    expect(rx.requests[0]?.url).toContain('wait=true');
    expect(JSON.parse(rx.requests[0]?.body ?? '{}').allowed_mentions).toEqual({ parse: [], users: [] });
  });

  it('retries a 429 after the body’s retry_after seconds', async () => {
    rx = await startReceiver(discordServer);
    const res = await discord.send(sampleMessage({ stage: 'progress', title: 'slow down' }), config, deps());
    expect(res).toMatchObject({ kind: 'retry', retryAfterMs: 1500 });
  });
});
