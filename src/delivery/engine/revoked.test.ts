import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Module } from '../../kernel/module.js';
import type { ReloadHub } from '../../kernel/reload.js';
import { notifyModule } from '../../notify/module.js';
import { takeoverModule } from '../../takeover/module.js';
import { auth } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { type Harness, harness, SECRET, type ScriptedReceiver, startScriptedReceiver } from '../testing.js';
import { NOW, sampleMessage } from '../../channels/channel.case.js';
import { clearFeishuTokens, feishu, feishuConfig } from '../../channels/feishu/index.js';
import { type FeishuPlatform, startFeishuPlatform } from '../../channels/feishu/testing.js';
import { fetchPost } from '../../channels/testing.js';
import type { SendResult } from '../../egress/index.js';
import type { Outcome } from '../retry.js';
import { revocationOf } from './revoked.js';

/**
 * Issue 20 point 7, the send side: a credential the provider refuses (Slack `token_revoked`, a Telegram
 * 401) marks the channel revoked, alerts through the other channels, fails later sends at once with the
 * fix, and is lifted by an admin or by a changed credential. A local receiver answers like Slack's Web
 * API and Telegram's Bot API, errors included.
 */
describe.each(await dialects())('a channel whose credential is revoked on %s', (dialect) => {
  let rx: ScriptedReceiver;
  let h: Harness;
  const env: Record<string, string> = {
    SLACK_BOT: 'xoxb-1',
    SLACK_BOT_2: 'xoxb-2',
    TG_BOT: '123:old',
    HOOK_SECRET: SECRET,
  };
  const slack = { revoked: true };

  beforeAll(async () => {
    rx = await startScriptedReceiver();
    rx.script = (hit) => {
      if (hit.url === '/api/chat.postMessage')
        return slack.revoked
          ? { kind: 'answer', status: 200, body: JSON.stringify({ ok: false, error: 'token_revoked' }) }
          : { kind: 'answer', status: 200, body: JSON.stringify({ ok: true, ts: '1700000000.000100' }) };
      if (hit.url.startsWith('/bot'))
        return hit.url.startsWith('/bot123:new/')
          ? { kind: 'answer', status: 200, body: JSON.stringify({ ok: true, result: { message_id: 7 } }) }
          : {
              kind: 'answer',
              status: 401,
              body: JSON.stringify({ ok: false, error_code: 401, description: 'Unauthorized' }),
            };
      return { kind: 'answer', status: 204 };
    };
    h = await harness({
      dialect,
      channels: {
        chat: {
          type: 'slack',
          token_env: 'SLACK_BOT',
          channel: 'C1',
          api_url: `${rx.url}/api/chat.postMessage`,
        },
        tg: { type: 'telegram', token_env: 'TG_BOT', chat_id: 42, api_url: rx.url },
        hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' },
      },
      module: { env },
      modules: [notifyModule() as Module, takeoverModule() as Module],
    });
  });
  afterAll(async () => {
    await h.cleanup();
    await rx.close();
  });

  const row = async (id: string) => (await h.rows()).find((r) => r.id === id)!;
  const health = async () =>
    (
      (await (await h.app.request('/v1/deliveries/channels', { headers: auth('admin') })).json()) as {
        channels: { name: string; status: string; reason?: string; fix?: string }[];
      }
    ).channels;
  const restore = (name: string) =>
    h.app.request(`/v1/deliveries/channels/${name}/restore`, { method: 'POST', headers: auth('admin') });

  it('marks Slack revoked on token_revoked, alerts through the other channels, refuses later sends, and an admin lifts it', async () => {
    const first = await h.enqueue('chat');
    await h.drain();
    expect(await row(first.id)).toMatchObject({
      status: 'dead',
      last_error: expect.stringContaining('token_revoked'),
    });
    const revoked = (await h.events('integration.credential')).filter(
      (e) => e.type === 'integration.credential.revoked',
    );
    expect(revoked).toHaveLength(1);
    expect(revoked[0]?.summary).toMatchObject({
      channel: 'chat',
      channel_type: 'slack',
      reason: 'slack: token_revoked',
      delivery_id: first.id,
    });
    expect(JSON.stringify(revoked[0])).not.toContain('xoxb-1');
    expect((await health()).find((c) => c.name === 'chat')).toMatchObject({
      status: 'revoked',
      reason: 'slack: token_revoked',
      fix: expect.stringContaining('POST /v1/deliveries/channels/chat/restore'),
    });
    // Waiting for a person, on the takeover queue.
    const queue = (await (await h.app.request('/v1/takeover', { headers: auth('admin') })).json()) as {
      items: { kind: string; id: string; act: string }[];
    };
    expect(queue.items.find((i) => i.kind === 'revoked_channel')).toMatchObject({
      id: 'chat',
      act: expect.stringContaining('restore'),
    });

    // The alert: on the priority lane, to every channel but the revoked one.
    await h.services.relay.drain();
    const alerts = (await h.rows()).filter((r) => Number(r.priority) === 1);
    expect(alerts.map((r) => r.destination).sort()).toEqual(['hook', 'tg']);
    expect(JSON.parse(alerts[0]!.message ?? '{}')).toMatchObject({
      kind: 'alert',
      severity: 'critical',
      summary: 'Channel chat: its credential was revoked at the provider; nothing is sent to it',
    });

    // While revoked, a send fails at once with the fix, and nothing reaches Slack.
    const posts = () => rx.hits.filter((x) => x.url === '/api/chat.postMessage').length;
    const before = posts();
    const second = await h.enqueue('chat');
    await h.drain();
    expect(await row(second.id)).toMatchObject({
      status: 'dead',
      last_error: expect.stringMatching(
        /^channel chat is revoked since .*\(slack: token_revoked\): replace its credential in channels\.chat/,
      ),
    });
    expect(posts()).toBe(before);
    const dead = (await h.events('integration.delivery')).filter(
      (e) => e.type === 'integration.delivery.dead' && e.summary['delivery_id'] === second.id,
    );
    expect(dead[0]?.summary).toMatchObject({ channel_revoked: true });

    slack.revoked = false;
    expect((await restore('chat')).status).toBe(200);
    expect((await restore('chat')).status).toBe(409);
    expect((await restore('nope')).status).toBe(404);
    expect((await health()).find((c) => c.name === 'chat')?.status).toBe('ok');
    const restored = (await h.events('integration.credential')).filter(
      (e) => e.type === 'integration.credential.restored',
    );
    expect(restored.at(-1)?.summary).toMatchObject({ channel: 'chat', by: 'admin' });
    const third = await h.enqueue('chat');
    await h.drain();
    expect((await row(third.id)).status).toBe('succeeded');
  });

  it('marks Telegram revoked on a 401, and lifts it by itself once the token changes', async () => {
    const first = await h.enqueue('tg');
    await h.drain();
    expect((await row(first.id)).status).toBe('dead');
    expect((await health()).find((c) => c.name === 'tg')).toMatchObject({
      status: 'revoked',
      reason: 'telegram: HTTP 401 (the provider refused the credential)',
    });
    const held = await h.enqueue('tg');
    await h.drain();
    expect((await row(held.id)).last_error).toContain('channel tg is revoked');

    env.TG_BOT = '123:new'; // the operator put the new token in place (a restart or a reload reads it)
    const next = await h.enqueue('tg');
    await h.drain();
    expect((await row(next.id)).status).toBe('succeeded');
    expect((await health()).find((c) => c.name === 'tg')?.status).toBe('ok');
    const restored = (await h.events('integration.credential')).filter(
      (e) => e.type === 'integration.credential.restored',
    );
    expect(restored.at(-1)?.summary).toMatchObject({ channel: 'tg', by: 'credential_changed' });
    // What failed meanwhile replays like any dead letter.
    await h.delivery.service()!.replay({ ids: [held.id] });
    await h.drain();
    expect((await row(held.id)).status).toBe('succeeded');
  });

  it('lifts the mark when a config reload replaces the credential', async () => {
    slack.revoked = true;
    const first = await h.enqueue('chat');
    await h.drain();
    expect((await row(first.id)).status).toBe('dead');
    expect((await health()).find((c) => c.name === 'chat')?.status).toBe('revoked');
    slack.revoked = false;
    const channels = (h.services.config as unknown as { channels: Record<string, Record<string, unknown>> })
      .channels;
    (h.services.reloads as ReloadHub).publish({
      ...h.services.config,
      channels: { ...channels, chat: { ...channels['chat'], token_env: 'SLACK_BOT_2' } },
    } as typeof h.services.config);
    for (let i = 0; i < 50 && (await health()).find((c) => c.name === 'chat')?.status !== 'ok'; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect((await health()).find((c) => c.name === 'chat')?.status).toBe('ok');
    const next = await h.enqueue('chat');
    await h.drain();
    expect((await row(next.id)).status).toBe('succeeded');
    const sent = rx.hits.filter((x) => x.url === '/api/chat.postMessage').at(-1);
    expect(sent?.headers['authorization']).toBe('Bearer xoxb-2');
  });
});

/**
 * Feishu app mode: the token endpoint refusing the app's credentials (a local open platform that
 * answers as Feishu does, code 10014 for a wrong secret) reads as a revoked credential; a message the
 * platform refuses for another reason (a bot outside the chat, 230002) does not.
 */
describe('a Feishu app whose credentials the platform refuses', () => {
  const APP_ID = 'cli_a1b2c3d4e5f60789';
  const SECRET_VALUE = 'app-secret-3f9a1c7e5b2d';
  const CHAT = 'oc_5ad11d72b830411d72b836c20';
  let platform: FeishuPlatform;
  beforeAll(async () => {
    clearFeishuTokens();
    platform = await startFeishuPlatform({ appId: APP_ID, appSecret: SECRET_VALUE, chats: [CHAT] });
  });
  afterAll(() => platform.close());

  const send = async (secret: string, receiveId: string) => {
    const config = feishuConfig.parse({
      type: 'feishu',
      app: {
        app_id: APP_ID,
        app_secret_env: 'FEISHU_APP_SECRET',
        receive_id: receiveId,
        receive_id_type: 'chat_id',
        base_url: platform.url,
      },
    });
    let status: number | undefined;
    const verdict = await feishu.send(sampleMessage(), config, {
      post: async (req) => {
        const res = await fetchPost(req);
        status = res.status;
        return res;
      },
      now: () => NOW,
      secret: (env) => (env === 'FEISHU_APP_SECRET' ? secret : undefined),
    });
    // As the attempt reads it: a dead verdict of the channel is the dead outcome, with its reason.
    const outcome: Outcome =
      verdict.kind === 'dead' ? { kind: 'dead', reason: verdict.reason } : { kind: 'ok' };
    const raw: SendResult = { sent: true, durationMs: 0, ...(status ? { status } : {}) };
    return { outcome, raw };
  };

  it('marks a wrong app secret as revoked, naming the code and never the secret', async () => {
    clearFeishuTokens();
    const { outcome, raw } = await send('not-the-secret', CHAT);
    const why = revocationOf('feishu', outcome, raw);
    expect(why).toMatch(/^feishu: the tenant token request was refused \(code 10014\)/);
    expect(why).not.toContain('not-the-secret');
  });

  it('does not call a message the platform refuses for another reason a revoked credential', async () => {
    clearFeishuTokens();
    const { outcome, raw } = await send(SECRET_VALUE, 'oc_5ad11d72b830411d72b836c21');
    expect(outcome.kind).toBe('dead');
    expect(revocationOf('feishu', outcome, raw)).toBeUndefined();
  });
});
