import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { feishuClick } from '../../callbacks/click.js';
import type { HttpPost, SendDeps } from '../channel.js';
import type { Message } from '../../notify/port.js';
import { ACTIONS, approvalMessage, NOW, sampleMessage } from '../channel.case.js';
import { checkChannels } from '../config.js';
import { fetchPost } from '../testing.js';
import { TOKEN_REFRESH_MARGIN_MS } from './app.js';
import { clearFeishuTokens, FEISHU_OPEN_API, feishu, feishuConfig, feishuUuid } from './index.js';
import { type FeishuPlatform, feishuAnswers, startFeishuPlatform } from './testing.js';

const APP_ID = 'cli_a1b2c3d4e5f60789';
const SECRET = 'app-secret-3f9a1c7e5b2d';
const CHAT = 'oc_5ad11d72b830411d72b836c20';

const configFor = (base: string, over: Record<string, unknown> = {}) =>
  feishuConfig.parse({
    type: 'feishu',
    app: {
      app_id: APP_ID,
      app_secret_env: 'FEISHU_APP_SECRET',
      receive_id: CHAT,
      receive_id_type: 'chat_id',
      base_url: base,
      ...over,
    },
  });

describe('Feishu app mode against a local Feishu open platform', () => {
  let platform: FeishuPlatform;
  const clock = { now: NOW };
  const posts: string[] = [];
  /** `secret: null` leaves the variable unset. */
  const deps = (secret: string | null = SECRET, post: HttpPost = fetchPost): SendDeps => ({
    post: async (req) => {
      posts.push(req.url);
      return post(req);
    },
    now: () => clock.now,
    secret: (env) => (env === 'FEISHU_APP_SECRET' ? (secret ?? undefined) : undefined),
  });
  const send = (msg: Message, d: SendDeps = deps(), over: Record<string, unknown> = {}) =>
    feishu.send(msg, configFor(platform.url, over), d);

  beforeEach(async () => {
    clearFeishuTokens();
    posts.length = 0;
    clock.now = NOW;
    platform = await startFeishuPlatform({ appId: APP_ID, appSecret: SECRET, chats: [CHAT] });
  });
  afterEach(() => platform.close());

  it('fetches a tenant token, then posts the card to im/v1/messages with it, and returns the message id', async () => {
    const res = await send(approvalMessage());
    expect(res).toEqual({ kind: 'ok', providerId: platform.messages[0]?.messageId });
    expect(res.kind === 'ok' && res.providerId).toMatch(/^om_/);
    const [tokenReq, messageReq] = platform.receiver.requests;
    expect(tokenReq?.url).toBe('/open-apis/auth/v3/tenant_access_token/internal');
    expect(JSON.parse(tokenReq?.body ?? '{}')).toEqual({ app_id: APP_ID, app_secret: SECRET });
    expect(messageReq?.url).toBe('/open-apis/im/v1/messages?receive_id_type=chat_id');
    expect(messageReq?.headers['authorization']).toMatch(/^Bearer t-[0-9a-f]+$/);
    const body = JSON.parse(messageReq?.body ?? '{}');
    expect(body).toMatchObject({ receive_id: CHAT, msg_type: 'interactive' });
    expect(typeof body.content).toBe('string');
    expect(body.uuid.length).toBeLessThanOrEqual(50);
    expect(body.uuid).toBe(
      feishuUuid(approvalMessage().eventId, { receive_id: CHAT, receive_id_type: 'chat_id' }),
    );
    const card = platform.messages[0]!.card;
    expect(card.header.title.content).toBe('Awaiting approval · Run the production migration');
  });

  it('puts callback buttons on the card whose value src/callbacks decides on, and keeps the page link', async () => {
    await send(approvalMessage({ locale: 'zh' }));
    const buttons = platform.messages[0]!.card.body.elements.filter((e) => e.tag === 'button');
    expect(buttons.map((b) => b.text?.content)).toEqual(['批准', '拒绝', '打开审批页面']);
    expect(buttons[0]?.behaviors).toEqual([
      { type: 'callback', value: { switchboard: 'approve', approval_id: ACTIONS.approvalId } },
    ]);
    expect(buttons[2]?.behaviors).toEqual([{ type: 'open_url', default_url: ACTIONS.pageUrl }]);
    // What Feishu would post back when each button is pressed, read by the callbacks module's parser.
    const pressed = (value: unknown) =>
      feishuClick({
        schema: '2.0',
        header: { event_type: 'card.action.trigger' },
        event: { operator: { open_id: 'ou_boss' }, action: { tag: 'button', value } },
      });
    expect(pressed(buttons[0]?.behaviors?.[0]?.value)).toEqual({
      kind: 'click',
      decision: 'approve',
      approvalId: ACTIONS.approvalId,
      userId: 'ou_boss',
    });
    expect(pressed(buttons[1]?.behaviors?.[0]?.value)).toMatchObject({ decision: 'reject' });
    // No link to the one-time approve/reject URLs: on the card, only the callback decides.
    expect(JSON.stringify(platform.messages[0]!.card)).not.toContain(ACTIONS.approveUrl);
  });

  it('sends a progress message without buttons', async () => {
    expect((await send(sampleMessage())).kind).toBe('ok');
    const elements = platform.messages[0]!.card.body.elements;
    expect(elements.some((e) => e.tag === 'button')).toBe(false);
    expect(elements[0]?.text?.content).toContain('Migration 42 failed');
  });

  it('reuses the cached token for the next message', async () => {
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T41' }));
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T42' }));
    expect(platform.tokenRequests()).toBe(1);
    expect(platform.messages).toHaveLength(2);
  });

  it('shares one token request between concurrent sends', async () => {
    const results = await Promise.all(
      [1, 2, 3].map((i) => send(sampleMessage({ eventId: `evt_01JDZ3R5W8XK2M4N6P8Q0S2T4${i}` }))),
    );
    expect(results.map((r) => r.kind)).toEqual(['ok', 'ok', 'ok']);
    expect(platform.tokenRequests()).toBe(1);
  });

  it('fetches a new token shortly before the cached one expires', async () => {
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T41' }));
    clock.now = NOW + 7200_000 - TOKEN_REFRESH_MARGIN_MS - 1;
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T42' }));
    expect(platform.tokenRequests()).toBe(1);
    clock.now = NOW + 7200_000 - TOKEN_REFRESH_MARGIN_MS;
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T43' }));
    expect(platform.tokenRequests()).toBe(2);
  });

  it('keeps tokens apart per app and per platform (Feishu and Lark)', async () => {
    const lark = await startFeishuPlatform({ appId: APP_ID, appSecret: SECRET, chats: [CHAT] });
    try {
      await send(sampleMessage());
      expect((await feishu.send(sampleMessage(), configFor(lark.url), deps())).kind).toBe('ok');
      expect(lark.tokenRequests()).toBe(1);
      expect(platform.tokenRequests()).toBe(1);
    } finally {
      await lark.close();
    }
  });

  it('refreshes a token the platform calls invalid (99991663) and sends once more', async () => {
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T41' }));
    platform.expireTokens();
    const res = await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T42' }));
    expect(res.kind).toBe('ok');
    expect(platform.tokenRequests()).toBe(2);
    expect(platform.messageRequests()).toHaveLength(3);
    const [, stale, fresh] = platform.messageRequests();
    expect(stale?.headers['authorization']).not.toBe(fresh?.headers['authorization']);
    expect(stale?.body).toBe(fresh?.body);
    expect(platform.messages).toHaveLength(2);
  });

  it('retries only once: a fresh token that is refused too is a retry for later, not a loop', async () => {
    // Every token is dead by the time it arrives (a clock or tenant problem no refresh fixes).
    const refusing: HttpPost = async (req) => {
      if (req.url.includes('/im/v1/messages')) platform.expireTokens();
      return fetchPost(req);
    };
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T41' }));
    const res = await send(
      sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T42' }),
      deps(SECRET, refusing),
    );
    expect(res).toEqual({ kind: 'retry', error: expect.stringContaining('99991663') });
    expect(platform.tokenRequests()).toBe(2);
    expect(platform.messageRequests()).toHaveLength(3);
  });

  it('maps the frequency limit (230020, HTTP 400) to retry', async () => {
    platform.failNext(feishuAnswers.rateLimited);
    expect(await send(sampleMessage())).toEqual({
      kind: 'retry',
      error: 'feishu code 230020: This operation triggers the frequency limit.',
    });
  });

  it('maps the gateway limit (99991400, HTTP 429) to retry after x-ogw-ratelimit-reset', async () => {
    platform.failNext(feishuAnswers.gatewayLimited);
    expect(await send(sampleMessage())).toMatchObject({ kind: 'retry', retryAfterMs: 2000 });
  });

  it('maps a server error to retry', async () => {
    platform.failNext(feishuAnswers.serverError);
    expect((await send(sampleMessage())).kind).toBe('retry');
  });

  it('treats a bot outside the chat (230002) and a missing scope (99991672) as dead', async () => {
    const outside = await send(sampleMessage(), deps(), { receive_id: 'oc_0000000000000000000000000' });
    expect(outside).toMatchObject({ kind: 'dead', reason: expect.stringContaining('230002') });
    platform.failNext(feishuAnswers.noPermission);
    const denied = await send(sampleMessage());
    expect(denied).toMatchObject({ kind: 'dead', reason: expect.stringContaining('99991672') });
    expect(platform.messages).toHaveLength(0);
  });

  it('posts a repeated event once: the uuid lets Feishu drop the duplicate', async () => {
    const first = await send(approvalMessage());
    const again = await send(approvalMessage());
    expect(again).toEqual(first);
    expect(platform.messageRequests()).toHaveLength(2);
    expect(platform.messages).toHaveLength(1);
  });

  it('treats a wrong app secret as dead, names the variable, and never shows the secret', async () => {
    const res = await send(sampleMessage(), deps('not-the-secret'));
    expect(res).toMatchObject({ kind: 'dead', reason: expect.stringContaining('10014') });
    expect(res.kind === 'dead' && res.reason).toContain('FEISHU_APP_SECRET');
    expect(JSON.stringify(res)).not.toContain('not-the-secret');
    expect(platform.messageRequests()).toHaveLength(0);
  });

  it('treats an unset secret variable as dead without any request', async () => {
    const res = await send(sampleMessage(), deps(null));
    expect(res).toEqual({ kind: 'dead', reason: 'environment variable FEISHU_APP_SECRET is not set' });
    expect(posts).toHaveLength(0);
  });

  it('never puts the token or the secret in a result', async () => {
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T41' }));
    const token = platform.messageRequests()[0]?.headers['authorization']?.slice('Bearer '.length) ?? '';
    expect(token).not.toBe('');
    const results = [];
    for (const answer of Object.values(feishuAnswers)) {
      platform.failNext(answer);
      results.push(await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T42' })));
    }
    for (const r of results) {
      expect(JSON.stringify(r)).not.toContain(token);
      expect(JSON.stringify(r)).not.toContain(SECRET);
    }
  });

  it('turns a network failure after the token into retry', async () => {
    await send(sampleMessage({ eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T41' }));
    const down: HttpPost = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    };
    expect(await send(sampleMessage(), deps(SECRET, down))).toEqual({
      kind: 'retry',
      error: 'network error (ECONNREFUSED)',
    });
  });
});

describe('Feishu app mode: rendering', () => {
  const config = feishuConfig.parse({
    type: 'feishu',
    app: {
      app_id: APP_ID,
      app_secret_env: 'FEISHU_APP_SECRET',
      receive_id: 'ou_7d8a6e6df7621556',
      receive_id_type: 'open_id',
    },
  });
  const ctx = { now: NOW, secret: () => SECRET };

  it('renders the request purely, for the default platform, without the token or the secret', () => {
    const r = feishu.format(approvalMessage(), config, ctx);
    expect(r.url).toBe(`${FEISHU_OPEN_API}/open-apis/im/v1/messages?receive_id_type=open_id`);
    expect(Object.keys(r.headers).map((h) => h.toLowerCase())).not.toContain('authorization');
    expect(r.body).not.toContain(SECRET);
  });

  it('derives the uuid from the event and the receiver, within 50 characters', () => {
    const a = { receive_id: CHAT, receive_id_type: 'chat_id' as const };
    const b = { receive_id: 'oc_another', receive_id_type: 'chat_id' as const };
    expect(feishuUuid('evt_1', a)).toBe(feishuUuid('evt_1', a));
    expect(feishuUuid('evt_1', a)).not.toBe(feishuUuid('evt_2', a));
    expect(feishuUuid('evt_1', a)).not.toBe(feishuUuid('evt_1', b));
    expect(feishuUuid('x'.repeat(500), a).length).toBeLessThanOrEqual(50);
  });

  it('renders a reply link as a Reply button in both modes when the message has one', () => {
    const reply = { url: 'https://sb.example/r/tok_123' };
    const msg = sampleMessage({ locale: 'zh', reply });
    const app = JSON.parse(JSON.parse(feishu.format(msg, config, ctx).body).content);
    expect(app.body.elements.at(-1)).toEqual({
      tag: 'button',
      text: { tag: 'plain_text', content: '回复' },
      type: 'default',
      behaviors: [{ type: 'open_url', default_url: reply.url }],
    });
    const hook = feishuConfig.parse({
      type: 'feishu',
      url: 'https://open.feishu.cn/open-apis/bot/v2/hook/x',
    });
    const card = JSON.parse(feishu.format({ ...msg, locale: 'en' }, hook, ctx).body).card;
    expect(card.elements.at(-1)).toEqual({
      tag: 'action',
      actions: [
        { tag: 'button', text: { tag: 'plain_text', content: 'Reply' }, type: 'default', url: reply.url },
      ],
    });
  });
});

describe('Feishu config: webhook mode or app mode', () => {
  const check = (entry: Record<string, unknown>) => checkChannels({ lark: { type: 'feishu', ...entry } });
  const app = { app_id: APP_ID, app_secret_env: 'FEISHU_APP_SECRET', receive_id: CHAT };

  it('accepts either mode, with Lark as the base URL', () => {
    expect(check({ url_env: 'FEISHU_HOOK' })).toEqual([]);
    expect(check({ app })).toEqual([]);
    expect(check({ app: { ...app, base_url: 'https://open.larksuite.com' } })).toEqual([]);
    expect(feishuConfig.parse({ type: 'feishu', app }).app).toMatchObject({
      receive_id_type: 'chat_id',
      base_url: FEISHU_OPEN_API,
    });
  });

  it('refuses both modes at once, and neither, saying what to set', () => {
    expect(check({ url_env: 'FEISHU_HOOK', app })).toEqual([
      { path: 'channels.lark.app', message: expect.stringContaining('choose one mode') },
    ]);
    expect(check({})).toEqual([{ path: 'channels.lark', message: expect.stringContaining('or app') }]);
    expect(check({ url: 'https://open.feishu.cn/x', url_env: 'FEISHU_HOOK' })).toEqual([
      { path: 'channels.lark', message: 'set exactly one of url or url_env' },
    ]);
  });

  it('refuses a webhook secret in app mode', () => {
    expect(check({ app, secret_env: 'FEISHU_SECRET' })).toEqual([
      { path: 'channels.lark.secret_env', message: expect.stringContaining('app.app_secret_env') },
    ]);
  });

  it('names the bad key inside app: unknown keys, a literal secret, a bad app id, an id of the wrong type', () => {
    expect(check({ app: { ...app, app_secret: 'literal' } })).toContainEqual({
      path: 'channels.lark.app.app_secret',
      message: expect.stringContaining('unknown key'),
    });
    expect(check({ app: { ...app, app_id: 'a1b2' } })[0]?.path).toBe('channels.lark.app.app_id');
    expect(check({ app: { ...app, receive_id_type: 'open_id' } })).toEqual([
      {
        path: 'channels.lark.app.receive_id',
        message: expect.stringContaining('an open_id starts with ou_'),
      },
    ]);
    expect(check({ app: { ...app, receive_id_type: 'phone' } })[0]?.path).toBe(
      'channels.lark.app.receive_id_type',
    );
    expect(check({ app: { ...app, receive_id_type: 'user_id', receive_id: '5d9bd7e2' } })).toEqual([]);
  });
});
