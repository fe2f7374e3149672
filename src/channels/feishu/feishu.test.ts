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
import { feishu, feishuSign } from './index.js';

const SECRET = 'test-secret';
const HOOK = '/open-apis/bot/v2/hook/3c8f2b6e-0000-4000-8000-000000000000';
const body = (r: HttpRequest) =>
  JSON.parse(r.body) as { card: { elements: Record<string, unknown>[] } } & Record<string, unknown>;
const elements = (r: HttpRequest) => body(r).card.elements;

channelCase({
  kind: feishu,
  rawConfig: { type: 'feishu', url_env: 'FEISHU_HOOK', secret_env: 'FEISHU_SECRET' },
  rawMentionConfig: {
    type: 'feishu',
    url_env: 'FEISHU_HOOK',
    secret_env: 'FEISHU_SECRET',
    mention_open_id: 'ou_7d8a6e6df7621556ce0d21922b676706ccs',
  },
  secrets: { FEISHU_HOOK: `https://open.feishu.cn${HOOK}`, FEISHU_SECRET: SECRET },
  text: (r) => String((elements(r)[0] as { text: { content: string } }).text.content),
  wire: (r) => r.body,
  buttons: (r) => {
    const action = elements(r).find((e) => e['tag'] === 'action') as
      | { actions: { url: string }[] }
      | undefined;
    const [a, b] = action?.actions ?? [];
    return a && b ? { approve: a.url, reject: b.url } : undefined;
  },
  mentions: (r) => r.body.includes('<at id=ou_'),
  responses: {
    ok: response(200, { code: 0, msg: 'success', data: {} }),
    business: response(200, {
      code: 19021,
      msg: 'sign match fail or timestamp is not within one hour from current time',
    }),
    businessExpect: 'dead',
    rateLimited: response(200, { code: 9499, msg: 'too many request' }),
    serverError: response(502, '<html>bad gateway</html>'),
  },
});

// App mode: the rendered request is `im/v1/messages`, whose `content` is the card as a JSON string.
const appCard = (r: HttpRequest) =>
  JSON.parse(String((JSON.parse(r.body) as { content: string }).content)) as {
    body: { elements: Record<string, unknown>[] };
  };
/** Every string in a value, so the suite scans text as Feishu shows it, not JSON-escaped. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : typeof v === 'object' && v !== null ? Object.values(v).flatMap(strings) : [];
const APP = {
  app_id: 'cli_a1b2c3d4e5f60789',
  app_secret_env: 'FEISHU_APP_SECRET',
  receive_id: 'oc_5ad11d72b830411d72b836c20',
};

channelCase({
  kind: feishu,
  rawConfig: { type: 'feishu', app: APP },
  rawMentionConfig: { type: 'feishu', app: APP, mention_open_id: 'ou_7d8a6e6df7621556ce0d21922b676706ccs' },
  secrets: { FEISHU_APP_SECRET: 'app-secret-for-tests' },
  text: (r) => String((appCard(r).body.elements[0] as { text: { content: string } }).text.content),
  wire: (r) => [r.url, ...strings(JSON.parse(r.body)), ...strings(appCard(r))].join('\n'),
  buttons: (r) => {
    const values = appCard(r)
      .body.elements.flatMap((e) => (e['behaviors'] as { type: string; value?: unknown }[] | undefined) ?? [])
      .filter((b) => b.type === 'callback')
      .map((b) => JSON.stringify(b.value));
    const [approve, reject] = values;
    return approve && reject ? { approve, reject } : undefined;
  },
  mentions: (r) => strings(appCard(r)).some((t) => t.includes('<at id=ou_')),
  responses: {
    ok: response(200, {
      code: 0,
      msg: 'success',
      data: { message_id: 'om_dc13264520392913993dd051dba21dcf' },
    }),
    business: response(400, { code: 230002, msg: 'The bot can not be outside the group.' }),
    businessExpect: 'dead',
    rateLimited: response(400, { code: 230020, msg: 'This operation triggers the frequency limit.' }),
    serverError: response(502, '<html>bad gateway</html>'),
  },
});

describe('the Feishu custom-bot signature', () => {
  it('matches the vectors in signature_vectors.md 4a', () => {
    expect(feishuSign(1599360473, 'demo')).toBe('l1N0gAcBjdwBvGm1xMjOF0XSyaLRpR7tuO5dHfhAYc8=');
    expect(feishuSign(1599360473, 'test-secret')).toBe('wSds2BzzFIIGf/WrhUO+NI1q/9j+FRJd3JNHKAq0NZY=');
  });

  it('is not the DingTalk scheme with the key and the message swapped', () => {
    const swapped = createHmac('sha256', 'demo').update('1599360473\ndemo').digest('base64');
    expect(feishuSign(1599360473, 'demo')).not.toBe(swapped);
  });
});

/** What Feishu checks (bot-v3 add-custom-bot): token in the path, sign over ts+"\n"+secret, ±1 h, msg_type, 20 KB. */
function feishuServer(req: ReceivedRequest): Answer {
  if (req.url !== HOOK)
    return json(200, { code: 19001, msg: 'param invalid: incoming webhook access token invalid' });
  if (Buffer.byteLength(req.body) > 20 * 1024) return json(200, { code: 9499, msg: 'Bad Request' });
  const m = JSON.parse(req.body) as Record<string, unknown>;
  const ts = Number(m['timestamp']);
  const expected = Buffer.from(
    createHmac('sha256', `${m['timestamp']}\n${SECRET}`).update('').digest('base64'),
  );
  const got = Buffer.from(String(m['sign'] ?? ''));
  const fresh = typeof m['timestamp'] === 'string' && Math.abs(Date.now() / 1000 - ts) <= 3600;
  if (!fresh || got.length !== expected.length || !timingSafeEqual(got, expected)) {
    return json(200, {
      code: 19021,
      msg: 'sign match fail or timestamp is not within one hour from current time',
    });
  }
  const card = m['card'] as { header?: unknown; elements?: unknown[] } | undefined;
  if (m['msg_type'] !== 'interactive' || !card?.header || !Array.isArray(card.elements)) {
    return json(200, { code: 11246, msg: 'create card content failed' });
  }
  return json(200, { code: 0, msg: 'success', data: {} });
}

describe('Feishu against a local Feishu stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const deps = (hook: string, secret = SECRET, now = Date.now) => ({
    post: fetchPost,
    now,
    secret: (e: string) => ({ FEISHU_HOOK: hook, FEISHU_SECRET: secret })[e],
  });
  const config = feishu.configSchema.parse({
    type: 'feishu',
    url_env: 'FEISHU_HOOK',
    secret_env: 'FEISHU_SECRET',
  });

  it('delivers a signed interactive card with approve and reject buttons', async () => {
    rx = await startReceiver(feishuServer);
    expect(await feishu.send(approvalMessage({ locale: 'zh' }), config, deps(rx.url + HOOK))).toEqual({
      kind: 'ok',
    });
    const sent = JSON.parse(rx.requests[0]?.body ?? '{}');
    expect(sent.card.header.title.content).toBe('等待审批 · Run the production migration');
    expect(sent.card.elements[1].actions.map((a: { text: { content: string } }) => a.text.content)).toEqual([
      '批准',
      '拒绝',
      '打开审批页面',
    ]);
  });

  it('treats a wrong secret, answered with HTTP 200 and code 19021, as dead', async () => {
    rx = await startReceiver(feishuServer);
    const res = await feishu.send(sampleMessage(), config, deps(rx.url + HOOK, 'other-secret'));
    expect(res).toMatchObject({ kind: 'dead', reason: expect.stringContaining('19021') });
  });

  it('treats a timestamp two hours old as dead, because Feishu refuses it', async () => {
    rx = await startReceiver(feishuServer);
    const res = await feishu.send(
      sampleMessage(),
      config,
      deps(rx.url + HOOK, SECRET, () => Date.now() - 7_200_000),
    );
    expect(res.kind).toBe('dead');
  });

  it('treats an unknown hook token as dead', async () => {
    rx = await startReceiver(feishuServer);
    const res = await feishu.send(sampleMessage(), config, deps(`${rx.url}/open-apis/bot/v2/hook/nope`));
    expect(res).toMatchObject({ kind: 'dead', reason: expect.stringContaining('19001') });
  });
});
