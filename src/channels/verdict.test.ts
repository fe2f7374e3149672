import { describe, expect, it } from 'vitest';
import { NOW, sampleMessage } from './channel.case.js';
import type { HttpResponse } from './channel.js';
import { classifyStatus } from './http.js';
import { discordVerdict } from './discord/index.js';
import { clearFeishuTokens, feishuVerdict } from './feishu/index.js';
import { CHANNEL_KINDS } from './registry.js';
import { slackVerdict } from './slack/index.js';
import { telegramVerdict } from './telegram/index.js';
import { response } from './testing.js';

/**
 * `verdict(res)`: a channel's reading of an answer of any status, or undefined where only the status
 * speaks. The delivery engine follows it over its status rules (docs/delivery.md, "Who decides").
 */

const { feishu, telegram, discord, slack } = CHANNEL_KINDS;
const verdicts = [
  [feishu, feishuVerdict],
  [telegram, telegramVerdict],
  [discord, discordVerdict],
  [slack, slackVerdict],
] as const;

const proxyPage = response(502, '<html><body>502 Bad Gateway</body></html>', { 'content-type': 'text/html' });

describe('channel verdicts on answers of any status', () => {
  it('gives a verdict only to kinds whose provider says more than the status', () => {
    const withVerdict = Object.entries(CHANNEL_KINDS)
      .filter(([, k]) => 'verdict' in k && typeof k.verdict === 'function')
      .map(([name]) => name)
      .sort();
    expect(withVerdict).toEqual(['discord', 'feishu', 'slack', 'telegram']);
  });

  it('has no opinion on a proxy’s error page, whatever the kind', () => {
    for (const [, verdict] of verdicts) expect(verdict(proxyPage)).toBeUndefined();
  });

  it('reads Feishu’s frequency limit sent with HTTP 400 as retry, with the reset header as the hint', () => {
    expect(
      feishuVerdict(
        response(
          400,
          { code: 230020, msg: 'This operation triggers the frequency limit.' },
          { 'x-ogw-ratelimit-reset': '4' },
        ),
      ),
    ).toEqual({
      kind: 'retry',
      error: 'feishu code 230020: This operation triggers the frequency limit.',
      retryAfterMs: 4000,
    });
    expect(feishuVerdict(response(400, { code: 99991663, msg: 'Invalid access token' }))).toMatchObject({
      kind: 'retry',
    });
    expect(
      feishuVerdict(response(400, { code: 230002, msg: 'The bot can not be outside the group.' })),
    ).toEqual({
      kind: 'dead',
      reason: 'feishu code 230002: The bot can not be outside the group.',
    });
  });

  it('reads a Feishu 429 without a code by its x-ogw-ratelimit-reset header', () => {
    const res = response(429, 'Too Many Requests', { 'x-ogw-ratelimit-reset': '3' });
    expect(feishuVerdict(res)).toMatchObject({ kind: 'retry', retryAfterMs: 3000 });
    expect(feishuVerdict(response(429, 'Too Many Requests'))).toBeUndefined();
  });

  it('keeps the reset hint when the Feishu token request itself is limited without a code', async () => {
    clearFeishuTokens();
    const config = feishu.configSchema.parse({
      type: 'feishu',
      app: {
        app_id: 'cli_a1b2c3d4e5f60789',
        app_secret_env: 'APP_SECRET',
        receive_id: 'oc_5ad11d72b830411d72b836c2',
      },
    });
    const limited = response(429, 'Too Many Requests', { 'x-ogw-ratelimit-reset': '5' });
    const res = await feishu.send(sampleMessage(), config, {
      post: async () => limited,
      now: () => NOW,
      secret: () => 'app-secret',
    });
    expect(res).toMatchObject({ kind: 'retry', retryAfterMs: 5000 });
    expect(feishuVerdict(limited)).toMatchObject({ kind: 'retry', retryAfterMs: 5000 });
  });

  it('reads Telegram’s retry_after from the body and keeps its description on a refusal', () => {
    expect(
      telegramVerdict(
        response(429, {
          ok: false,
          error_code: 429,
          description: 'Too Many Requests: retry after 3',
          parameters: { retry_after: 3 },
        }),
      ),
    ).toEqual({ kind: 'retry', error: 'telegram 429: Too Many Requests: retry after 3', retryAfterMs: 3000 });
    expect(
      telegramVerdict(
        response(403, { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' }),
      ),
    ).toEqual({ kind: 'dead', reason: 'telegram 403: Forbidden: bot was blocked by the user' });
  });

  it('reads Discord’s float retry_after from a 429 body, rounded up to the millisecond', () => {
    expect(
      discordVerdict(
        response(429, { message: 'You are being rate limited.', retry_after: 0.0014, global: false }),
      ),
    ).toMatchObject({ kind: 'retry', retryAfterMs: 2 });
    expect(discordVerdict(response(404, { message: 'Unknown Webhook', code: 10015 }))).toEqual({
      kind: 'dead',
      reason: 'discord code 10015: Unknown Webhook',
    });
    expect(discordVerdict(response(503, { message: 'upstream', code: 0 }))).toBeUndefined();
  });

  it('leaves a Slack incoming webhook’s text errors to the status, but reads the Web API’s JSON', () => {
    expect(slackVerdict(response(404, 'no_service'))).toBeUndefined();
    expect(slackVerdict(response(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '30' }))).toEqual(
      {
        kind: 'retry',
        error: 'slack: ratelimited',
        retryAfterMs: 30_000,
      },
    );
  });

  it('makes parseResult the verdict, else the status, for every kind that has one', () => {
    const answers: HttpResponse[] = [
      proxyPage,
      response(400, { code: 230020, msg: 'limit' }),
      response(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' }),
      response(429, { message: 'slow', retry_after: 1.5 }, { 'retry-after': '2' }),
      response(404, 'no_service'),
      response(410, 'gone'),
      response(301, ''),
    ];
    for (const [kind, verdict] of verdicts) {
      expect(kind.verdict).toBe(verdict);
      for (const res of answers) {
        const expected = verdict(res) ?? classifyStatus(res);
        expect(kind.parseResult(res)).toEqual(expected);
      }
    }
  });
});
