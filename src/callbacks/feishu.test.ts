import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { type TestApp, testApp } from '../server/testing.js';
import { approvalsModule } from '../approvals/module.js';
import { approvalsPort } from '../approvals/port.js';
import { deliveryModule } from '../delivery/module.js';
import { larkSignature } from '../ingress/sources/feishu/crypto.js';
import { coreModule } from '../server/core-routes.js';
import { callbacksModule } from './module.js';

const ENCRYPT_KEY = 'feishu-encrypt-key-for-tests';
const TOKEN = 'feishu-verification-token';
const SECRETS: Record<string, string> = { LARK_KEY: ENCRYPT_KEY, LARK_TOKEN: TOKEN };
const HOOK = 'https://open.feishu.cn/open-apis/bot/v2/hook/x';
const CHANNELS = {
  // `signed` has an encrypt key (signature + encrypted bodies); `plain` relies on the token in the body.
  signed: { type: 'feishu', url: HOOK },
  plain: { type: 'feishu', url: HOOK },
  ops: { type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/x' },
};

type Json = Record<string, unknown>;

function encrypt(plain: string, key: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', createHash('sha256').update(key).digest(), iv);
  return Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}

describe.each(await dialects())('Feishu card callbacks on %s', (dialect) => {
  let t: TestApp;
  const clock = { now: Date.now() };
  let eventSeq = 0;

  const start = async (feishu: Json) => {
    t = await testApp({
      dialect,
      config: { channels: CHANNELS },
      now: () => clock.now,
      modules: [
        coreModule(),
        approvalsModule({ expiryWorker: false }),
        deliveryModule({ workers: false }),
        callbacksModule({ config: { feishu }, secrets: (env) => SECRETS[env] }),
      ],
    });
  };
  beforeEach(async () => {
    clock.now = Date.now();
    await start({
      signed: { encrypt_key_env: 'LARK_KEY', verification_token_env: 'LARK_TOKEN' },
      plain: { verification_token_env: 'LARK_TOKEN' },
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const ask = async () =>
    t.port(approvalsPort).request({
      action: 'deploy prod',
      reason: 'release 1.2',
      plan: { tool: 'Bash', input: { ref: 'v1.2' } },
      requested_by: { name: 'bot', role: 'agent' },
    });
  const state = async (id: string) => (await t.port(approvalsPort).get(id))!;

  const cardAction = (value: unknown, opts: { openId?: string; token?: string } = {}) => ({
    schema: '2.0',
    header: {
      event_id: `ev_${++eventSeq}`,
      token: opts.token ?? TOKEN,
      create_time: String(clock.now),
      event_type: 'card.action.trigger',
      tenant_key: 'tk',
      app_id: 'cli_x',
    },
    event: {
      operator: { tenant_key: 'tk', open_id: opts.openId ?? 'ou_boss' },
      token: 'c-123',
      action: { value, tag: 'button' },
      host: 'im_message',
      context: { open_message_id: 'om_1', open_chat_id: 'oc_1' },
    },
  });
  const press = (approvalId: string, decision = 'approve', opts: { openId?: string; token?: string } = {}) =>
    cardAction({ switchboard: decision, approval_id: approvalId }, opts);

  /** A request to the signed channel: encrypted body, X-Lark-Signature over the raw bytes. */
  const signed = (payload: unknown, opts: { key?: string; raw?: string; channel?: string } = {}) => {
    const body = opts.raw ?? JSON.stringify({ encrypt: encrypt(JSON.stringify(payload), ENCRYPT_KEY) });
    const ts = String(Math.floor(clock.now / 1000));
    const nonce = 'n0nce';
    const sig = larkSignature(ts, nonce, opts.key ?? ENCRYPT_KEY, Buffer.from(body));
    return t.app.request(`/v1/callbacks/feishu/${opts.channel ?? 'signed'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-lark-request-timestamp': ts,
        'x-lark-request-nonce': nonce,
        'x-lark-signature': sig,
      },
      body,
    });
  };
  /** A request to the token-only channel: plain JSON, no signature. */
  const plain = (payload: unknown, opts: { raw?: string; channel?: string; type?: string } = {}) =>
    t.app.request(`/v1/callbacks/feishu/${opts.channel ?? 'plain'}`, {
      method: 'POST',
      headers: { 'content-type': opts.type ?? 'application/json' },
      body: opts.raw ?? JSON.stringify(payload),
    });

  describe('with an encrypt key (signed, encrypted)', () => {
    it('approves from a signed card action and answers with a success toast, as the Feishu user', async () => {
      const a = await ask();
      const res = await signed(press(a.id));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ toast: { type: 'success', content: 'approved' } });
      expect(await state(a.id)).toMatchObject({ state: 'approved', decided_by: 'feishu:ou_boss' });
    });

    it('rejects from the reject button', async () => {
      const a = await ask();
      const res = await signed(press(a.id, 'reject'));
      expect(await res.json()).toEqual({ toast: { type: 'success', content: 'rejected' } });
      expect((await state(a.id)).state).toBe('rejected');
    });

    it('refuses a forged signature with 401 and decides nothing', async () => {
      const a = await ask();
      expect((await signed(press(a.id), { key: 'not-the-key' })).status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('refuses an unsigned card action with 401 even when its token is right', async () => {
      const a = await ask();
      expect((await plain(press(a.id), { channel: 'signed' })).status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('refuses a signed body whose token is wrong with 401', async () => {
      const a = await ask();
      expect((await signed(press(a.id, 'approve', { token: 'wrong' }))).status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('decides once when the button is pressed twice; the second press says already decided', async () => {
      const a = await ask();
      await signed(press(a.id));
      const second = await signed(press(a.id, 'reject'));
      expect(second.status).toBe(200);
      expect(await second.json()).toEqual({ toast: { type: 'info', content: 'already decided' } });
      expect((await state(a.id)).state).toBe('approved');
      const decided = await t.services.db.query<{ n: number | string }>({
        text: "SELECT COUNT(*) AS n FROM events WHERE type = 'agent.approval.approved' OR type = 'agent.approval.rejected'",
      });
      expect(Number(decided[0]!.n)).toBe(1);
    });

    it('answers an encrypted url_verification challenge with the right token', async () => {
      const res = await signed({ type: 'url_verification', challenge: 'ch-1', token: TOKEN });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ challenge: 'ch-1' });
    });
  });

  describe('with a verification token only', () => {
    it('approves from a card action whose body carries the token', async () => {
      const a = await ask();
      const res = await plain(press(a.id));
      expect(await res.json()).toEqual({ toast: { type: 'success', content: 'approved' } });
      expect(await state(a.id)).toMatchObject({ state: 'approved', decided_by: 'feishu:ou_boss' });
    });

    it('refuses a wrong token with 401 and decides nothing', async () => {
      const a = await ask();
      expect((await plain(press(a.id, 'approve', { token: 'wrong' }))).status).toBe(401);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('answers the challenge only when its token checks', async () => {
      const ok = await plain({ type: 'url_verification', challenge: 'ch-2', token: TOKEN });
      expect(await ok.json()).toEqual({ challenge: 'ch-2' });
      const bad = await plain({ type: 'url_verification', challenge: 'ch-3', token: 'wrong' });
      expect(bad.status).toBe(401);
    });

    it('decides once when the button is pressed twice', async () => {
      const a = await ask();
      await plain(press(a.id, 'reject'));
      const second = await plain(press(a.id));
      expect(await second.json()).toEqual({ toast: { type: 'info', content: 'already decided' } });
      expect((await state(a.id)).state).toBe('rejected');
    });

    it('answers an unknown approval with an info toast', async () => {
      const res = await plain(press('apr_01JAAAAAAAAAAAAAAAAAAAAAAA'));
      expect(await res.json()).toEqual({ toast: { type: 'info', content: 'no such approval' } });
    });

    it('ignores other events and other buttons with an empty object', async () => {
      const a = await ask();
      const other = press(a.id);
      other.header.event_type = 'im.message.receive_v1';
      expect(await (await plain(other)).json()).toEqual({});
      expect(await (await plain(cardAction({ somebody: 'else' }))).json()).toEqual({});
      expect((await state(a.id)).state).toBe('pending');
    });

    it('answers 400 for malformed bodies and button values', async () => {
      const a = await ask();
      expect((await plain(null, { raw: '{not json' })).status).toBe(400);
      expect((await plain([1, 2])).status).toBe(400);
      expect((await plain(cardAction({ switchboard: 'maybe', approval_id: a.id }))).status).toBe(400);
      expect((await plain(cardAction({ switchboard: 'approve', approval_id: 'apr_x' }))).status).toBe(400);
      const noOperator = press(a.id) as Json & { event: Json };
      delete noOperator.event.operator;
      expect((await plain(noOperator)).status).toBe(400);
      const noEventId = press(a.id) as Json & { header: Json };
      delete noEventId.header.event_id;
      expect((await plain(noEventId)).status).toBe(400);
      expect((await state(a.id)).state).toBe('pending');
    });

    it('answers 404 for an unknown channel or one of another kind, 415 and 413 for bad bodies', async () => {
      const a = await ask();
      expect((await plain(press(a.id), { channel: 'nope' })).status).toBe(404);
      expect((await plain(press(a.id), { channel: 'ops' })).status).toBe(404);
      expect((await plain(press(a.id), { type: 'text/plain' })).status).toBe(415);
      const big = JSON.stringify({ pad: 'x'.repeat(t.config.server.body_limit_bytes + 1) });
      expect((await plain(null, { raw: big })).status).toBe(413);
    });

    it('lets only the allowed open_ids decide when allowed_open_ids is set', async () => {
      await t.cleanup();
      await start({ plain: { verification_token_env: 'LARK_TOKEN', allowed_open_ids: ['ou_boss'] } });
      const a = await ask();
      const res = await plain(press(a.id, 'approve', { openId: 'ou_intern' }));
      expect(await res.json()).toEqual({
        toast: { type: 'error', content: 'you may not decide this approval' },
      });
      expect((await state(a.id)).state).toBe('pending');
      expect(await (await plain(press(a.id))).json()).toEqual({
        toast: { type: 'success', content: 'approved' },
      });
    });
  });

  it('refuses to start for a channel of another kind or an unset secret', () => {
    const wrongKind = callbacksModule({
      config: { feishu: { ops: { verification_token_env: 'LARK_TOKEN' } } },
    });
    expect(() => wrongKind.start?.(t.kernel.depsFor(wrongKind))).toThrow(/no channel of type feishu/);
    const unset = callbacksModule({
      config: { feishu: { signed: { verification_token_env: 'LARK_TOKEN', encrypt_key_env: 'UNSET_KEY' } } },
      secrets: (env) => (env === 'LARK_TOKEN' ? TOKEN : undefined),
    });
    expect(() => unset.start?.(t.kernel.depsFor(unset))).toThrow(/UNSET_KEY is not set/);
    const unknownKey = callbacksModule({ config: { feishu: { plain: { verification_token: 'x' } } } });
    expect(() => unknownKey.start?.(t.kernel.depsFor(unknownKey))).toThrow();
  });
});
