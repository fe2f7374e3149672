import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { type TestApp, testApp } from '../server/testing.js';
import { approvalsModule } from '../approvals/module.js';
import { approvalsPort } from '../approvals/port.js';
import { deliveryModule } from '../delivery/module.js';
import { SLACK_APPROVE_ACTION, SLACK_REJECT_ACTION, telegramCallbackData } from '../channels/index.js';
import { coreModule } from '../server/core-routes.js';
import { callbacksModule } from './module.js';

const SLACK_SECRET = 'slack-signing-secret-for-tests';
const TG_TOKEN = 'tg-secret-token_for-tests';
const SECRETS: Record<string, string> = { SLACK_SIGNING: SLACK_SECRET, TG_SECRET: TG_TOKEN };

const CHANNELS = {
  ops: { type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/x', interactive: true },
  phone: { type: 'telegram', token_env: 'TG_BOT', chat_id: 42 },
};

type Json = Record<string, unknown>;

describe.each(await dialects())('approval callbacks on %s', (dialect) => {
  let t: TestApp;
  const clock = { now: Date.now() };

  const start = async (callbacks: Json) => {
    t = await testApp({
      dialect,
      config: { channels: CHANNELS },
      now: () => clock.now,
      modules: [
        coreModule(),
        approvalsModule({ expiryWorker: false }),
        deliveryModule({ workers: false }),
        callbacksModule({ config: callbacks, secrets: (env) => SECRETS[env] }),
      ],
    });
  };
  beforeEach(async () => {
    clock.now = Date.now();
    await start({
      slack: { ops: { signing_secret_env: 'SLACK_SIGNING' } },
      telegram: { phone: { secret_token_env: 'TG_SECRET' } },
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const ask = async (ttlMs?: number) =>
    t.port(approvalsPort).request({
      action: 'deploy prod',
      reason: 'release 1.2',
      plan: { tool: 'Bash', input: { ref: 'v1.2' } },
      requested_by: { name: 'bot', role: 'agent' },
      ...(ttlMs ? { ttl_ms: ttlMs } : {}),
    });
  const state = async (id: string) => (await t.port(approvalsPort).get(id))!;

  const blockActions = (approvalId: string, actionId = SLACK_APPROVE_ACTION, user = 'U123ABC') => ({
    type: 'block_actions',
    user: { id: user, username: 'me', team_id: 'T0001' },
    team: { id: 'T0001', domain: 'example' },
    actions: [{ type: 'button', action_id: actionId, block_id: `approval_${approvalId}`, value: approvalId }],
    response_url: 'https://hooks.slack.com/actions/T0/1/x',
    trigger_id: '1.2.3',
  });
  const slack = (
    payload: unknown,
    opts: { secret?: string; ts?: number; raw?: string; channel?: string; type?: string } = {},
  ) => {
    const body = opts.raw ?? `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const ts = String(opts.ts ?? Math.floor(clock.now / 1000));
    const sig = createHmac('sha256', opts.secret ?? SLACK_SECRET)
      .update(`v0:${ts}:${body}`)
      .digest('hex');
    return t.app.request(`/v1/callbacks/slack/${opts.channel ?? 'ops'}`, {
      method: 'POST',
      headers: {
        'content-type': opts.type ?? 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': ts,
        'x-slack-signature': `v0=${sig}`,
      },
      body,
    });
  };

  const callbackUpdate = (data: string, from = 777) => ({
    update_id: 1001,
    callback_query: {
      id: 'cbq-1',
      from: { id: from, is_bot: false, first_name: 'Me' },
      message: { message_id: 5, chat: { id: 42, type: 'private' } },
      chat_instance: '1',
      data,
    },
  });
  const telegram = (update: unknown, opts: { token?: string; raw?: string; channel?: string } = {}) =>
    t.app.request(`/v1/callbacks/telegram/${opts.channel ?? 'phone'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-telegram-bot-api-secret-token': opts.token ?? TG_TOKEN,
      },
      body: opts.raw ?? JSON.stringify(update),
    });

  describe('Slack', () => {
    it('approves an approval from a signed block_actions click, as the Slack user', async () => {
      const a = await ask();
      const res = await slack(blockActions(a.id));
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).text).toBe('approved');
      expect(await state(a.id)).toMatchObject({ state: 'approved', decided_by: 'slack:U123ABC' });
    });

    it('rejects an approval from the reject button', async () => {
      const a = await ask();
      const res = await slack(blockActions(a.id, SLACK_REJECT_ACTION));
      expect(((await res.json()) as Json).text).toBe('rejected');
      expect((await state(a.id)).state).toBe('rejected');
    });

    it('refuses a forged signature with 401 and decides nothing', async () => {
      const a = await ask();
      const res = await slack(blockActions(a.id), { secret: 'not-the-secret' });
      expect(res.status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('refuses a timestamp older than five minutes with 401', async () => {
      const a = await ask();
      const res = await slack(blockActions(a.id), { ts: Math.floor(clock.now / 1000) - 301 });
      expect(res.status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('decides once when the button is pressed twice; the second press says already decided', async () => {
      const a = await ask();
      expect(((await (await slack(blockActions(a.id))).json()) as Json).text).toBe('approved');
      const second = await slack(blockActions(a.id, SLACK_REJECT_ACTION));
      expect(second.status).toBe(200);
      expect(((await second.json()) as Json).text).toBe('already decided');
      expect((await state(a.id)).state).toBe('approved');
      const decided = await t.services.db.query<{ n: number | string }>({
        text: "SELECT COUNT(*) AS n FROM events WHERE type = 'agent.approval.approved' OR type = 'agent.approval.rejected'",
      });
      expect(Number(decided[0]!.n)).toBe(1);
    });

    it('answers expired for an approval past its expiry', async () => {
      const a = await ask(60_000);
      clock.now += 61_000;
      const res = await slack(blockActions(a.id));
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).text).toBe('expired');
    });

    it('answers for an unknown approval without deciding anything', async () => {
      const res = await slack(blockActions('apr_01JAAAAAAAAAAAAAAAAAAAAAAA'));
      expect(((await res.json()) as Json).text).toBe('no such approval');
    });

    it('answers 404 for a channel without callbacks', async () => {
      const a = await ask();
      expect((await slack(blockActions(a.id), { channel: 'nope' })).status).toBe(404);
      expect((await slack(blockActions(a.id), { channel: 'phone' })).status).toBe(404);
    });

    it('answers 400 for signed bodies that are not a block_actions click', async () => {
      expect((await slack(null, { raw: 'payload=%7Bnot-json' })).status).toBe(400);
      expect((await slack(null, { raw: 'foo=bar' })).status).toBe(400);
      expect((await slack({ type: 'block_actions', user: { id: 'U1' } })).status).toBe(400);
      const bad = blockActions('apr_x');
      expect((await slack(bad)).status).toBe(400);
    });

    it('ignores other interactions and other buttons with a bare 200', async () => {
      expect((await slack({ type: 'view_submission', user: { id: 'U1' } })).status).toBe(200);
      const a = await ask();
      expect((await slack(blockActions(a.id, 'someone_elses_button'))).status).toBe(200);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('answers 415 for a JSON body and 413 for an oversized one', async () => {
      const a = await ask();
      expect((await slack(blockActions(a.id), { type: 'application/json' })).status).toBe(415);
      const big = `payload=${'x'.repeat(t.config.server.body_limit_bytes + 1)}`;
      expect((await slack(null, { raw: big })).status).toBe(413);
    });

    it('lets only the allowed users decide when allowed_user_ids is set', async () => {
      await t.cleanup();
      await start({ slack: { ops: { signing_secret_env: 'SLACK_SIGNING', allowed_user_ids: ['UBOSS'] } } });
      const a = await ask();
      expect(((await (await slack(blockActions(a.id))).json()) as Json).text).toBe(
        'you may not decide this approval',
      );
      expect((await state(a.id)).state).toBe('pending');
      const ok = await slack(blockActions(a.id, SLACK_APPROVE_ACTION, 'UBOSS'));
      expect(((await ok.json()) as Json).text).toBe('approved');
    });
  });

  describe('Telegram', () => {
    it('approves from an inline keyboard click and answers the callback query in the response', async () => {
      const a = await ask();
      const res = await telegram(callbackUpdate(telegramCallbackData('approve', a.id)));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        method: 'answerCallbackQuery',
        callback_query_id: 'cbq-1',
        text: 'approved',
      });
      expect(await state(a.id)).toMatchObject({ state: 'approved', decided_by: 'telegram:777' });
    });

    it('refuses a wrong or missing secret token with 401', async () => {
      const a = await ask();
      const update = callbackUpdate(telegramCallbackData('approve', a.id));
      expect((await telegram(update, { token: 'wrong-token' })).status).toBe(401);
      const none = await t.app.request('/v1/callbacks/telegram/phone', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(update),
      });
      expect(none.status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('decides once when the button is pressed twice', async () => {
      const a = await ask();
      await telegram(callbackUpdate(telegramCallbackData('reject', a.id)));
      const second = await telegram(callbackUpdate(telegramCallbackData('approve', a.id)));
      expect(second.status).toBe(200);
      expect(((await second.json()) as Json).text).toBe('already decided');
      expect((await state(a.id)).state).toBe('rejected');
    });

    it('ignores updates that are not callback queries, and answers foreign callback data without text', async () => {
      const plain = await telegram({ update_id: 7, message: { message_id: 1, text: 'hi' } });
      expect(plain.status).toBe(200);
      const foreign = await telegram(callbackUpdate('something:else'));
      expect(await foreign.json()).toEqual({ method: 'answerCallbackQuery', callback_query_id: 'cbq-1' });
    });

    it('answers 400 for malformed bodies and 404 for an unknown channel', async () => {
      expect((await telegram(null, { raw: '{not json' })).status).toBe(400);
      expect((await telegram({ no_update_id: true })).status).toBe(400);
      expect((await telegram({ update_id: 3, callback_query: { data: 'sb:approve:x' } })).status).toBe(400);
      expect((await telegram({ update_id: 3 }, { channel: 'ops' })).status).toBe(404);
    });

    it('takes clicks only from the chat the channel posts to', async () => {
      const a = await ask();
      const update = callbackUpdate(telegramCallbackData('approve', a.id));
      update.callback_query.message.chat.id = 99;
      expect(((await (await telegram(update)).json()) as Json).text).toBe('you may not decide this approval');
      expect((await state(a.id)).state).toBe('pending');
    });

    it('lets only the allowed users decide when allowed_user_ids is set', async () => {
      await t.cleanup();
      await start({ telegram: { phone: { secret_token_env: 'TG_SECRET', allowed_user_ids: [1] } } });
      const a = await ask();
      const res = await telegram(callbackUpdate(telegramCallbackData('approve', a.id), 2));
      expect(((await res.json()) as Json).text).toBe('you may not decide this approval');
      expect((await state(a.id)).state).toBe('pending');
    });
  });

  it('refuses to start when a callback names a channel of another kind or an unset secret', () => {
    const wrongKind = callbacksModule({
      config: { slack: { phone: { signing_secret_env: 'SLACK_SIGNING' } } },
    });
    expect(() => wrongKind.start?.(t.kernel.depsFor(wrongKind))).toThrow(/no channel of type slack/);
    const unset = callbacksModule({
      config: { slack: { ops: { signing_secret_env: 'UNSET_VAR' } } },
      secrets: () => undefined,
    });
    expect(() => unset.start?.(t.kernel.depsFor(unset))).toThrow(/UNSET_VAR is not set/);
    const unknownKey = callbacksModule({ config: { slack: { ops: { signing_secret: 'x' } } } });
    expect(() => unknownKey.start?.(t.kernel.depsFor(unknownKey))).toThrow();
  });
});
