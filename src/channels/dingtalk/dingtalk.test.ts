import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { dingtalk, dingtalkSign } from './index.js';

const SECRET = `SEC${'0'.repeat(64)}`;
const TOKEN = 'b0f1c2d3e4f5a6b7c8d9';
const body = (r: HttpRequest) => JSON.parse(r.body) as Record<string, Record<string, unknown>>;
const card = (r: HttpRequest) => body(r)['actionCard'] ?? body(r)['markdown'] ?? {};

channelCase({
  kind: dingtalk,
  rawConfig: { type: 'dingtalk', url_env: 'DT_HOOK', secret_env: 'DT_SECRET' },
  rawMentionConfig: {
    type: 'dingtalk',
    url_env: 'DT_HOOK',
    secret_env: 'DT_SECRET',
    mention_mobile: '13800000000',
  },
  secrets: { DT_HOOK: `https://oapi.dingtalk.com/robot/send?access_token=${TOKEN}`, DT_SECRET: SECRET },
  text: (r) => String(card(r)['text']).replace(/ {2}\n/g, '\n'),
  wire: (r) => r.body,
  buttons: (r) => {
    const btns = body(r)['actionCard']?.['btns'] as { actionURL: string }[] | undefined;
    return btns?.[0] && btns[1] ? { approve: btns[0].actionURL, reject: btns[1].actionURL } : undefined;
  },
  mentions: (r) => ((body(r)['at']?.['atMobiles'] as string[] | undefined) ?? []).length > 0,
  responses: {
    ok: response(200, { errcode: 0, errmsg: 'ok' }),
    business: response(200, { errcode: 310000, errmsg: 'sign not match' }),
    businessExpect: 'dead',
    rateLimited: response(200, { errcode: 130101, errmsg: 'send too fast, exceed 20 times per minute' }),
    serverError: response(503, 'busy'),
  },
});

describe('the DingTalk 加签 signature', () => {
  it('matches the vectors in signature_vectors.md 5', () => {
    expect(dingtalkSign(1577262236757, 'this is secret')).toBe(
      'hmPWwU%2B7lVdm3ZZz0r9tSfx0L4Q26jWOZr9%2BGs6EZQM%3D',
    );
    expect(dingtalkSign(1599360473000, SECRET)).toBe('%2Fi3YjbI05eyUCe%2BiloWxsVscj2sEaNjb4zKWzzcD86Q%3D');
  });
});

/** What DingTalk checks: access_token, ms timestamp within 1 h, sign, a known msgtype, isAtAll never set by us. */
function dingtalkServer(req: ReceivedRequest): Answer {
  const q = new URL(req.url, 'http://x').searchParams;
  if (q.get('access_token') !== TOKEN) return json(200, { errcode: 300001, errmsg: 'token is not exist' });
  const ts = q.get('timestamp') ?? '';
  const expected = Buffer.from(createHmac('sha256', SECRET).update(`${ts}\n${SECRET}`).digest('base64'));
  const got = Buffer.from(q.get('sign') ?? ''); // URLSearchParams has already URL-decoded it
  if (!/^\d{13}$/.test(ts) || Math.abs(Date.now() - Number(ts)) > 3_600_000) {
    return json(200, { errcode: 310000, errmsg: 'timestamp is invalid' });
  }
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
    return json(200, { errcode: 310000, errmsg: 'sign not match' });
  }
  const m = JSON.parse(req.body) as Record<string, Record<string, unknown>>;
  const type = m['msgtype'] as unknown as string;
  if (!['text', 'link', 'markdown', 'actionCard', 'feedCard'].includes(type) || !m[type]) {
    return json(200, { errcode: 40035, errmsg: 'invalid parameter' });
  }
  if (m['at']?.['isAtAll'] === true) return json(500, { errcode: -1, errmsg: 'test forbids @all' });
  if (type === 'actionCard' && !(m[type]['btns'] || m[type]['singleURL'])) {
    return json(200, { errcode: 40035, errmsg: 'actionCard needs btns or singleURL' });
  }
  return json(200, { errcode: 0, errmsg: 'ok' });
}

describe('DingTalk against a local DingTalk stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const config = dingtalk.configSchema.parse({
    type: 'dingtalk',
    url_env: 'DT_HOOK',
    secret_env: 'DT_SECRET',
  });
  const deps = (secret = SECRET) => ({
    post: fetchPost,
    now: Date.now,
    secret: (e: string) => ({ DT_HOOK: `${rx.url}/robot/send?access_token=${TOKEN}`, DT_SECRET: secret })[e],
  });

  it('delivers a signed ActionCard with approve and reject buttons', async () => {
    rx = await startReceiver(dingtalkServer);
    expect(await dingtalk.send(approvalMessage(), config, deps())).toEqual({ kind: 'ok' });
    expect(JSON.parse(rx.requests[0]?.body ?? '{}').msgtype).toBe('actionCard');
  });

  it('treats a wrong secret, answered with HTTP 200 and errcode 310000, as dead', async () => {
    rx = await startReceiver(dingtalkServer);
    const res = await dingtalk.send(sampleMessage(), config, deps(`SEC${'1'.repeat(64)}`));
    expect(res).toMatchObject({ kind: 'dead', reason: expect.stringContaining('310000') });
  });

  it('adds the configured keyword so the keyword security mode lets the message through', () => {
    const withKeyword = dingtalk.configSchema.parse({
      type: 'dingtalk',
      url: 'https://oapi.dingtalk.com/robot/send?access_token=x',
      keyword: 'Switchboard',
    });
    const req = dingtalk.format(sampleMessage(), withKeyword, { now: 0, secret: () => undefined });
    expect(JSON.parse(req.body).markdown.text).toMatch(/^\[Switchboard\] /);
  });
});
