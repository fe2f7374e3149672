import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { approvalsModule } from '../approvals/index.js';
import { clearFeishuTokens } from '../channels/feishu/index.js';
import { type FeishuPlatform, type StoredMessage, startFeishuPlatform } from '../channels/feishu/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { larkSignature } from '../ingress/sources/feishu/crypto.js';
import { notifyModule } from '../notify/module.js';
import { coreModule } from '../server/core-routes.js';
import type { RunningServer } from '../server/serve.js';
import { callbacksModule } from './module.js';

const APP_ID = 'cli_a1b2c3d4e5f60789';
const APP_SECRET = 'feishu-app-secret-for-e2e';
const CHAT = 'oc_5ad11d72b830411d72b836c20';
const ENCRYPT_KEY = 'feishu-encrypt-key-for-e2e';
const VERIFICATION_TOKEN = 'feishu-verification-token-e2e';
const SECRETS: Record<string, string> = {
  FEISHU_APP_SECRET: APP_SECRET,
  LARK_ENCRYPT_KEY: ENCRYPT_KEY,
  LARK_VERIFICATION_TOKEN: VERIFICATION_TOKEN,
};

/** What Feishu does with a callback body when an Encrypt Key is set: AES-256-CBC, key sha256(encrypt key). */
function encrypt(plain: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', createHash('sha256').update(ENCRYPT_KEY).digest(), iv);
  return Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}

describe.each(await dialects())('a Feishu app card decides an approval, end to end, on %s', (dialect) => {
  let platform: FeishuPlatform;
  let gw: TestGateway;
  let gateway: RunningServer;

  beforeAll(async () => {
    clearFeishuTokens();
    platform = await startFeishuPlatform({ appId: APP_ID, appSecret: APP_SECRET, chats: [CHAT] });
    gw = await testGateway({
      dialect,
      config: {
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
            { name: 'ops', role: 'admin', key: KEYS.admin },
          ],
        },
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
        routes: [{ match: 'true', channels: ['lark'] }],
        egress: { allow: ['127.0.0.1'] },
      },
      modules: [
        coreModule(),
        deliveryModule({ env: SECRETS }),
        approvalsModule({ expiryWorker: false }),
        notifyModule(),
        callbacksModule({
          config: {
            feishu: {
              lark: {
                encrypt_key_env: 'LARK_ENCRYPT_KEY',
                verification_token_env: 'LARK_VERIFICATION_TOKEN',
              },
            },
          },
          secrets: (env) => SECRETS[env],
        }),
      ],
      publicUrl: true,
    });
    gateway = gw.gateway;
  });
  afterAll(async () => {
    await gw?.stop();
    await platform?.close();
  });

  /** Waits (bounded) for the delivery engine to post the approval's card to the stand-in. */
  async function cardFor(approvalId: string): Promise<StoredMessage | undefined> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const found = platform.messages.find((m) => JSON.stringify(m.card).includes(approvalId));
      if (found || Date.now() > deadline) return found;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** What Feishu posts when someone presses the button: schema 2.0, encrypted, signed. */
  function press(value: unknown, openId: string) {
    const payload = {
      schema: '2.0',
      header: {
        event_id: `ev_${randomBytes(8).toString('hex')}`,
        token: VERIFICATION_TOKEN,
        create_time: String(Date.now()),
        event_type: 'card.action.trigger',
        tenant_key: 'tk',
        app_id: APP_ID,
      },
      event: {
        operator: { tenant_key: 'tk', open_id: openId },
        token: 'c-123',
        action: { value, tag: 'button' },
        host: 'im_message',
        context: { open_message_id: 'om_1', open_chat_id: CHAT },
      },
    };
    const body = JSON.stringify({ encrypt: encrypt(JSON.stringify(payload)) });
    const ts = String(Math.floor(Date.now() / 1000));
    const nonce = randomBytes(8).toString('hex');
    return fetch(`${gateway.url}/v1/callbacks/feishu/lark`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-lark-request-timestamp': ts,
        'x-lark-request-nonce': nonce,
        'x-lark-signature': larkSignature(ts, nonce, ENCRYPT_KEY, Buffer.from(body)),
      },
      body,
    });
  }

  const ask = async (action: string) => {
    const res = await fetch(`${gateway.url}/v1/approvals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.agent}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action, reason: 'release day' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const statusOf = async (id: string) => {
    const res = await fetch(`${gateway.url}/v1/approvals/${id}`, {
      headers: { authorization: `Bearer ${KEYS.agent}` },
    });
    return ((await res.json()) as { status: string }).status;
  };
  /** Waits (bounded) until the stand-in holds the card updated to a decision (no buttons left). */
  async function updated(card: StoredMessage): Promise<string[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const stored = platform.messages.find((m) => m.messageId === card.messageId)!;
      const done = !stored.card.body.elements.some((e) => e.tag === 'button');
      if (done || Date.now() > deadline) return stored.card.body.elements.map((e) => e.text?.content ?? '');
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const decide = (id: string, decision: 'approve' | 'reject') =>
    fetch(`${gateway.url}/v1/approvals/${id}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.approver}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision }),
    });
  const buttonValue = (card: StoredMessage, decision: 'approve' | 'reject') =>
    card.card.body.elements
      .flatMap((e) => e.behaviors ?? [])
      .find((b) => b.type === 'callback' && b.value?.['switchboard'] === decision)?.value;

  it('sends the card as the app, and the approve button pressed in Feishu approves', async () => {
    const id = await ask('deploy v2 to prod');
    const card = await cardFor(id);
    expect(card).toBeDefined();
    expect(card!.receiveId).toBe(CHAT);
    expect(card!.uuid?.length).toBeLessThanOrEqual(50);
    expect(platform.tokenRequests()).toBeGreaterThanOrEqual(1);
    const value = buttonValue(card!, 'approve');
    expect(value).toEqual({ switchboard: 'approve', approval_id: id });

    const res = await press(value, 'ou_boss');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ toast: { type: 'success', content: 'approved' } });
    expect(await statusOf(id)).toBe('approved');

    // The same card's reject button, pressed afterwards, changes nothing.
    const late = await press(buttonValue(card!, 'reject'), 'ou_boss');
    expect(await late.json()).toEqual({ toast: { type: 'info', content: 'already decided' } });
    expect(await statusOf(id)).toBe('approved');

    // The card is replaced in place: no buttons, and who decided when.
    const lines = await updated(card!);
    expect(lines[1]).toMatch(/^Approved by feishu:ou_boss at \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/);
    const patch = platform.updateRequests().find((r) => r.url.endsWith(card!.messageId));
    expect(patch?.headers['authorization']).toMatch(/^Bearer t-/);
  }, 30_000);

  it('updates the card when someone decides elsewhere (the API), with a token refreshed after expiry', async () => {
    const id = await ask('rotate the signing key');
    const card = await cardFor(id);
    expect(card).toBeDefined();
    const tokensBefore = platform.tokenRequests();
    platform.expireTokens();
    expect((await decide(id, 'reject')).status).toBe(200);
    const lines = await updated(card!);
    expect(lines[1]).toMatch(/^Rejected by me at .* UTC\.$/);
    expect(platform.tokenRequests()).toBe(tokensBefore + 1);
  }, 30_000);

  it('records a card Feishu will not update (recalled) as a dead delivery, not a loop', async () => {
    const id = await ask('purge the cache');
    const card = await cardFor(id);
    platform.recall(card!.messageId);
    expect((await decide(id, 'approve')).status).toBe(200);
    const deadline = Date.now() + 15_000;
    let dead: { status: string; last_error: string | null } | undefined;
    while (!dead && Date.now() < deadline) {
      const res = await fetch(`${gateway.url}/v1/deliveries?status=dead`, {
        headers: { authorization: `Bearer ${KEYS.admin}` },
      });
      const body = (await res.json()) as {
        deliveries?: { destination: string; status: string; last_error: string | null }[];
      };
      dead = body.deliveries?.find((d) => d.destination === `feishu-card:lark/${card!.messageId}`);
      if (!dead) await new Promise((r) => setTimeout(r, 50));
    }
    expect(dead?.last_error).toContain('230011');
    expect(platform.updateRequests().filter((r) => r.url.endsWith(card!.messageId))).toHaveLength(1);
  }, 30_000);

  it('rejects from the reject button of another approval', async () => {
    const id = await ask('drop the staging database');
    const card = await cardFor(id);
    expect(card).toBeDefined();
    const res = await press(buttonValue(card!, 'reject'), 'ou_boss');
    expect(await res.json()).toEqual({ toast: { type: 'success', content: 'rejected' } });
    expect(await statusOf(id)).toBe('rejected');
  }, 30_000);
});
