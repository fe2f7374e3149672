import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { clearFeishuTokens } from '../../channels/feishu/index.js';
import { type FeishuPlatform, feishuAnswers, startFeishuPlatform } from '../../channels/feishu/testing.js';
import {
  type Answer,
  json,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
} from '../../channels/testing.js';
import { type Harness, harness } from '../testing.js';

/**
 * The engine follows a channel's verdict on answers of any status (docs/delivery.md, "Who decides"):
 * Feishu's frequency limit sent with HTTP 400 is retried, its permanent codes die, and the retry hints
 * only the provider's own protocol carries (Feishu's `x-ogw-ratelimit-reset`, Telegram's
 * `parameters.retry_after`, Discord's body `retry_after`) set the next attempt. The clock is
 * injected, so the stored `next_attempt_at` is asserted exactly, never against wall time.
 */

const DIALECTS = await dialects();
const NOW = Date.parse('2026-11-29T12:00:00Z');

const APP_ID = 'cli_a1b2c3d4e5f60789';
const APP_SECRET = 'feishu-app-secret-for-verdicts';
const CHAT = 'oc_5ad11d72b830411d72b836c20';
const TG_TOKEN = '110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const TG_CHAT = -1001234567890;
const DISCORD_HOOK = '/api/webhooks/1180000000000000000/aBcDeFgHiJkLmNoPqRsTuVwXyZ';

const invalidToken = json(400, {
  code: 99991663,
  msg: 'Invalid access token for authorization. Please make a request with token attached.',
});

/**
 * sendMessage as the Bot API checks it (token in the path, JSON body, the chat, text 1–4096), with
 * scripted failures answered first, like Telegram: `{ok:false, error_code, description, parameters}`.
 */
function telegramApi(scripted: Answer[]) {
  return (req: ReceivedRequest): Answer => {
    if (req.method !== 'POST' || req.url !== `/bot${TG_TOKEN}/sendMessage`)
      return json(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    if (!/^application\/json/.test(req.headers['content-type'] ?? ''))
      return json(400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
    const m = JSON.parse(req.body) as { chat_id?: unknown; text?: unknown };
    if (m.chat_id !== TG_CHAT)
      return json(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
    if (typeof m.text !== 'string' || m.text.length === 0 || m.text.length > 4096)
      return json(400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
    const next = scripted.shift();
    if (next) return next;
    return json(200, { ok: true, result: { message_id: 7, chat: { id: TG_CHAT }, date: 1, text: m.text } });
  };
}

/** Execute Webhook as Discord checks it (the id/token path, JSON, content or embeds), scripted failures first. */
function discordApi(scripted: Answer[]) {
  return (req: ReceivedRequest): Answer => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== DISCORD_HOOK) return json(404, { message: 'Unknown Webhook', code: 10015 });
    const m = JSON.parse(req.body) as { content?: string; embeds?: unknown[] };
    if (!m.content && (m.embeds ?? []).length === 0)
      return json(400, { message: 'Cannot send an empty message', code: 50006 });
    const next = scripted.shift();
    if (next) return next;
    return json(200, { id: '1180000000000000001', type: 0, content: m.content ?? '' });
  };
}

describe.each(DIALECTS)('the delivery engine follows the channel’s verdict on %s', (dialect) => {
  let h: Harness | undefined;
  let platform: FeishuPlatform | undefined;
  let rx: Receiver | undefined;
  afterEach(async () => {
    await h?.cleanup();
    await platform?.close();
    await rx?.close();
    clearFeishuTokens();
    h = undefined;
    platform = undefined;
    rx = undefined;
  });

  async function feishuSetup() {
    platform = await startFeishuPlatform({ appId: APP_ID, appSecret: APP_SECRET, chats: [CHAT] });
    h = await harness({
      dialect,
      now: () => NOW,
      module: { env: { FEISHU_APP_SECRET: APP_SECRET } },
      channels: {
        lark: {
          type: 'feishu',
          app: {
            app_id: APP_ID,
            app_secret_env: 'FEISHU_APP_SECRET',
            receive_id: CHAT,
            base_url: platform.url,
          },
        },
      },
    });
    return { platform, h };
  }

  async function telegramSetup(...scripted: Answer[]) {
    rx = await startReceiver(telegramApi(scripted));
    h = await harness({
      dialect,
      now: () => NOW,
      module: { env: { TG_TOKEN } },
      channels: { phone: { type: 'telegram', token_env: 'TG_TOKEN', chat_id: TG_CHAT, api_url: rx.url } },
    });
    return { rx, h };
  }

  it('retries Feishu’s frequency limit 230020 sent with HTTP 400 instead of killing it, then delivers', async () => {
    const { platform, h } = await feishuSetup();
    platform.failNext(feishuAnswers.rateLimited);
    await h.enqueue('lark');
    await h.drain(1);
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 400 });
    expect(row?.last_error).toContain('feishu code 230020');
    await h.drain();
    expect((await h.rows())[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(platform.messages).toHaveLength(1);
    // A rate limit says the endpoint is up: no breaker failure.
    const breaker = JSON.parse((await h.endpoint('lark'))!.breaker) as { failures: number };
    expect(breaker.failures).toBe(0);
  });

  it('kills a permanent Feishu code sent with HTTP 400, naming the code', async () => {
    const { platform, h } = await feishuSetup();
    platform.failNext(feishuAnswers.noPermission);
    await h.enqueue('lark');
    await h.drain();
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'dead', attempts: 1, last_status: 400 });
    expect(row?.last_error).toMatch(/^feishu code 99991672: Access denied/);
    const dead = (await h.events('integration.delivery')).find((e) => e.type === 'integration.delivery.dead');
    expect(dead?.summary).toMatchObject({ status: 400 });
    expect(dead?.summary).not.toHaveProperty('disable');
    expect(platform.messages).toHaveLength(0);
  });

  it('schedules the next attempt and pauses the endpoint by x-ogw-ratelimit-reset on a gateway 429', async () => {
    const { platform, h } = await feishuSetup();
    platform.failNext(feishuAnswers.gatewayLimited);
    await h.enqueue('lark');
    await h.drain();
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 429 });
    expect(Number(row?.next_attempt_at)).toBe(NOW + 2_000);
    const bucket = JSON.parse((await h.endpoint('lark'))!.bucket) as { pausedUntil: number };
    expect(bucket.pausedUntil).toBe(NOW + 2_000);
  });

  it('retries a message whose token is still refused after one refresh', async () => {
    const { platform, h } = await feishuSetup();
    platform.failNext(invalidToken, invalidToken);
    await h.enqueue('lark');
    await h.drain(1);
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 400 });
    expect(row?.last_error).toContain('feishu code 99991663');
    expect(platform.messageRequests()).toHaveLength(2);
    await h.drain();
    expect((await h.rows())[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(platform.messages).toHaveLength(1);
  });

  it('schedules the next attempt by Telegram’s parameters.retry_after on a 429', async () => {
    const { rx, h } = await telegramSetup(
      json(429, {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 3',
        parameters: { retry_after: 3 },
      }),
    );
    await h.enqueue('phone');
    await h.drain();
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 429 });
    expect(Number(row?.next_attempt_at)).toBe(NOW + 3_000);
    expect(row?.last_error).toBe('telegram 429: Too Many Requests: retry after 3');
    const bucket = JSON.parse((await h.endpoint('phone'))!.bucket) as { pausedUntil: number };
    expect(bucket.pausedUntil).toBe(NOW + 3_000);
    const [failed] = await h.events('integration.delivery');
    expect(failed).toMatchObject({ type: 'integration.delivery.failed', summary: { throttle: true } });
    expect(rx.requests).toHaveLength(1);
  });

  it('keeps Telegram’s own description when the Bot API refuses for good', async () => {
    const { h } = await telegramSetup(
      json(403, { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' }),
    );
    await h.enqueue('phone');
    await h.drain();
    expect((await h.rows())[0]).toMatchObject({
      status: 'dead',
      last_status: 403,
      last_error: 'telegram 403: Forbidden: bot was blocked by the user',
    });
  });

  it('leaves a proxy’s 502 page in front of Telegram to the status rules', async () => {
    const { h } = await telegramSetup({
      status: 502,
      body: '<html>502 Bad Gateway</html>',
      headers: { 'content-type': 'text/html' },
    });
    await h.enqueue('phone');
    await h.drain(1);
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 502, last_error: 'status 502' });
    const [failed] = await h.events('integration.delivery');
    expect(failed?.summary).toMatchObject({ throttle: true });
  });

  it('schedules the next attempt by Discord’s body retry_after (seconds, a float) over the rounded header', async () => {
    rx = await startReceiver(
      discordApi([
        json(
          429,
          { message: 'You are being rate limited.', retry_after: 1.5, global: false },
          { 'retry-after': '2' },
        ),
      ]),
    );
    h = await harness({
      dialect,
      now: () => NOW,
      module: { env: { DISCORD_HOOK: `${rx.url}${DISCORD_HOOK}` } },
      channels: { team: { type: 'discord', url_env: 'DISCORD_HOOK' } },
    });
    await h.enqueue('team');
    await h.drain();
    const [row] = await h.rows();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 429 });
    expect(Number(row?.next_attempt_at)).toBe(NOW + 1_500);
    expect(row?.last_error).toBe('discord: You are being rate limited.');
  });
});
