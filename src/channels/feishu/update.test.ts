import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SendDeps } from '../channel.js';
import { approvalMessage, NOW } from '../channel.case.js';
import { fetchPost, json } from '../testing.js';
import {
  clearFeishuTokens,
  feishu,
  feishuCardTime,
  feishuConfig,
  feishuDecidedCard,
  updateFeishuAppCard,
} from './index.js';
import { type FeishuPlatform, feishuAnswers, startFeishuPlatform } from './testing.js';

const APP_ID = 'cli_a1b2c3d4e5f60789';
const SECRET = 'app-secret-3f9a1c7e5b2d';
const CHAT = 'oc_5ad11d72b830411d72b836c20';
const DECIDED_AT = Date.UTC(2026, 11, 1, 15, 30, 12);

describe('Feishu app mode: a sent card is updated in place after the decision', () => {
  let platform: FeishuPlatform;
  const deps: SendDeps = {
    post: fetchPost,
    now: () => NOW,
    secret: (env) => (env === 'FEISHU_APP_SECRET' ? SECRET : undefined),
  };
  const config = () =>
    feishuConfig.parse({
      type: 'feishu',
      app: { app_id: APP_ID, app_secret_env: 'FEISHU_APP_SECRET', receive_id: CHAT, base_url: platform.url },
    });
  const decided = feishuDecidedCard({
    title: 'Approval needed: deploy v2',
    summary: 'deploy v2 to prod',
    state: 'approved',
    decidedBy: 'feishu:ou_7d8a6e6df7621556ce0d21922b676706',
    at: DECIDED_AT,
  });
  /** Sends an approval card and answers its message id. */
  const sendCard = async (): Promise<string> => {
    const res = await feishu.send(approvalMessage(), config(), deps);
    if (res.kind !== 'ok' || !res.providerId) throw new Error(`not sent: ${JSON.stringify(res)}`);
    return res.providerId;
  };

  beforeEach(async () => {
    clearFeishuTokens();
    platform = await startFeishuPlatform({ appId: APP_ID, appSecret: SECRET, chats: [CHAT] });
  });
  afterEach(() => platform.close());

  it('sends a shared card (update_multi), which is what makes it updatable', async () => {
    await sendCard();
    expect(platform.messages[0]?.card.config).toEqual({ update_multi: true });
  });

  it('PATCHes im/v1/messages/:id with the bearer token and the card as a JSON string; the buttons are gone', async () => {
    const id = await sendCard();
    const app = config().app!;
    expect(await updateFeishuAppCard(id, decided, app, deps)).toEqual({ kind: 'ok', providerId: id });
    const [req] = platform.updateRequests();
    expect(req?.url).toBe(`/open-apis/im/v1/messages/${id}`);
    expect(req?.headers['authorization']).toMatch(/^Bearer t-[0-9a-f]+$/);
    expect(req?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(typeof JSON.parse(req!.body).content).toBe('string');
    const card = platform.messages[0]!.card;
    expect(card.header.template).toBe('green');
    expect(card.body.elements.some((e) => e.tag === 'button')).toBe(false);
    expect(card.body.elements.map((e) => e.text?.content)).toEqual([
      'deploy v2 to prod',
      'Approved by feishu:ou_7d8a6e6df7621556ce0d21922b676706 at 2026-12-01 15:30 UTC.',
    ]);
    // One token served both the send and the update.
    expect(platform.tokenRequests()).toBe(1);
  });

  it('says "rejected" and "expired" too, an expiry without anyone', () => {
    const rejected = feishuDecidedCard({
      title: 't',
      summary: 's',
      state: 'rejected',
      decidedBy: 'me',
      at: DECIDED_AT,
    });
    expect(rejected.body.elements[1]?.text.content).toBe('Rejected by me at 2026-12-01 15:30 UTC.');
    const expired = feishuDecidedCard({
      title: 't',
      summary: 's',
      state: 'expired',
      decidedBy: 'me',
      at: DECIDED_AT,
    });
    expect(expired.body.elements[1]?.text.content).toBe('Expired at 2026-12-01 15:30 UTC, undecided.');
    expect(expired.header.template).toBe('grey');
    expect(feishuCardTime(DECIDED_AT)).toBe('2026-12-01 15:30 UTC');
  });

  it('refreshes an expired token (99991663) once and updates with the new one', async () => {
    const id = await sendCard();
    platform.expireTokens();
    expect(await updateFeishuAppCard(id, decided, config().app!, deps)).toEqual({
      kind: 'ok',
      providerId: id,
    });
    expect(platform.tokenRequests()).toBe(2);
    const [stale, fresh] = platform.updateRequests();
    expect(stale?.headers['authorization']).not.toBe(fresh?.headers['authorization']);
  });

  it('treats a recalled message (230011, HTTP 400) as dead: Feishu will never update it', async () => {
    const id = await sendCard();
    platform.recall(id);
    expect(await updateFeishuAppCard(id, decided, config().app!, deps)).toEqual({
      kind: 'dead',
      reason: 'feishu code 230011: The message is recalled.',
    });
  });

  it('treats code != 0 with HTTP 200 as failure, and the frequency limit as retry', async () => {
    const id = await sendCard();
    platform.failNextUpdate(
      json(200, { code: 230001, msg: 'invalid request parameter' }),
      feishuAnswers.rateLimited,
    );
    const first = await updateFeishuAppCard(id, decided, config().app!, deps);
    expect(first).toEqual({ kind: 'dead', reason: 'feishu code 230001: invalid request parameter' });
    const second = await updateFeishuAppCard(id, decided, config().app!, deps);
    expect(second.kind).toBe('retry');
  });

  it('is refused by the platform when the new card is not shared, as Feishu demands both be', async () => {
    const id = await sendCard();
    const unshared = { ...decided, config: { update_multi: false } };
    const res = await updateFeishuAppCard(id, unshared, config().app!, deps);
    expect(res.kind).toBe('dead');
    expect(res.kind === 'dead' && res.reason).toContain('230099');
  });

  it('refuses a message id that is not om_… without any request', async () => {
    const res = await updateFeishuAppCard('../../auth', decided, config().app!, deps);
    expect(res.kind).toBe('dead');
    expect(platform.receiver.requests).toHaveLength(0);
  });
});
