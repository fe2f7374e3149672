import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { effectsModule, type EffectsModule } from '../../effects/module.js';
import type { Module } from '../../kernel/module.js';
import { dialects } from '../../store/testing.js';
import {
  type Harness,
  type Hit,
  harness,
  SECRET,
  type ScriptedReceiver,
  startScriptedReceiver,
} from '../testing.js';

/**
 * Issue 20 point 2: a chat send whose answer never came is reconciled by asking the provider (a local
 * receiver answering like Slack's Web API, Feishu's open platform and Telegram's Bot API), not sent
 * blindly again; only what cannot be settled waits for a person (the effect ledger's `unsettled`).
 */

const SLACK_TOKEN = 'xoxb-test-token';
const CHANNEL = 'C0123456789';

interface Posted {
  ts: string;
  event_id: string;
}

/**
 * Slack as its docs describe it: chat.postMessage and conversations.history both need the bot token
 * (`invalid_auth` otherwise) and a channel (`channel_not_found`); history returns the messages since
 * `oldest`, with their metadata only when `include_all_metadata=true`.
 */
function slackAnswer(hit: Hit, posted: Posted[], mode: { post: 'hang' | 'ok' | 'lost' }) {
  const url = new URL(hit.url, 'http://x');
  // An incoming webhook's URL is its secret; this one takes the message and never answers.
  if (url.pathname === '/api/hook') return { kind: 'hang' as const };
  if (hit.headers['authorization'] !== `Bearer ${SLACK_TOKEN}`)
    return {
      kind: 'answer' as const,
      status: 200,
      body: JSON.stringify({ ok: false, error: 'invalid_auth' }),
    };
  if (url.pathname === '/api/chat.postMessage') {
    const body = JSON.parse(hit.body) as {
      channel?: string;
      metadata?: { event_payload?: { event_id?: string } };
    };
    if (body.channel !== CHANNEL)
      return {
        kind: 'answer' as const,
        status: 200,
        body: JSON.stringify({ ok: false, error: 'channel_not_found' }),
      };
    const ts = `1700000000.${String(posted.length + 1).padStart(6, '0')}`;
    if (mode.post !== 'lost') posted.push({ ts, event_id: body.metadata?.event_payload?.event_id ?? '' });
    if (mode.post === 'ok')
      return { kind: 'answer' as const, status: 200, body: JSON.stringify({ ok: true, ts }) };
    return { kind: 'hang' as const };
  }
  if (url.pathname === '/api/conversations.history') {
    if (url.searchParams.get('channel') !== CHANNEL)
      return {
        kind: 'answer' as const,
        status: 200,
        body: JSON.stringify({ ok: false, error: 'channel_not_found' }),
      };
    const withMeta = url.searchParams.get('include_all_metadata') === 'true';
    const messages = posted.map((p) => ({
      type: 'message',
      ts: p.ts,
      text: 'Build finished',
      ...(withMeta
        ? { metadata: { event_type: 'switchboard_message', event_payload: { event_id: p.event_id } } }
        : {}),
    }));
    return {
      kind: 'answer' as const,
      status: 200,
      body: JSON.stringify({ ok: true, messages, has_more: false }),
    };
  }
  return {
    kind: 'answer' as const,
    status: 404,
    body: JSON.stringify({ ok: false, error: 'unknown_method' }),
  };
}

/**
 * A Standard Webhooks receiver with the status URL docs/channels.md documents: every request (the
 * POST and the status GET over an empty body) is verified with the reference library, and
 * `GET /deliveries/<event_id>` answers `{ event_id, status: "received", id }` for an event it has, 404
 * for one it never got (or `hook.status` when a test wants another answer).
 */
function webhookAnswer(
  hit: Hit,
  received: Map<string, string>,
  hook: { post: 'hang' | 'ok' | 'lost'; status?: number },
) {
  try {
    new Webhook(SECRET).verify(hit.url === '/hook' ? hit.body : '', hit.headers);
  } catch {
    return { kind: 'answer' as const, status: 401, body: JSON.stringify({ error: 'bad signature' }) };
  }
  const id = hit.headers['webhook-id'] ?? '';
  if (hit.url === '/hook') {
    if (hook.post !== 'lost' && !received.has(id)) received.set(id, `rcv_${received.size + 1}`);
    return hook.post === 'ok' ? { kind: 'answer' as const, status: 204 } : { kind: 'hang' as const };
  }
  const url = new URL(hit.url, 'http://x');
  const asked = decodeURIComponent(url.pathname.slice('/deliveries/'.length));
  // The signature binds the question to the event: a GET for another id than it signs is refused.
  if (asked !== id || url.searchParams.get('view') !== 'status')
    return { kind: 'answer' as const, status: 400, body: '{}' };
  if (hook.status !== undefined) return { kind: 'answer' as const, status: hook.status, body: '{}' };
  const rcv = received.get(asked);
  return rcv
    ? {
        kind: 'answer' as const,
        status: 200,
        body: JSON.stringify({ event_id: asked, status: 'received', id: rcv }),
      }
    : { kind: 'answer' as const, status: 404, body: JSON.stringify({ error: 'unknown event' }) };
}

describe.each(await dialects())('the reconciler on %s', (dialect) => {
  let rx: ScriptedReceiver;
  let h: Harness;
  let effects: EffectsModule;
  const posted: Posted[] = [];
  const mode: { post: 'hang' | 'ok' | 'lost' } = { post: 'hang' };
  let feishuSends = 0;
  /** The webhook receiver: event ids it has, how it answers a POST and its status URL. */
  const received = new Map<string, string>();
  const hook: { post: 'hang' | 'ok' | 'lost'; status?: number } = { post: 'hang' };

  beforeAll(async () => {
    rx = await startScriptedReceiver();
    rx.script = (hit) => {
      if (hit.url.startsWith('/api/')) return slackAnswer(hit, posted, mode);
      if (hit.url === '/hook' || hit.url.startsWith('/deliveries/'))
        return webhookAnswer(hit, received, hook);
      if (hit.url === '/open-apis/auth/v3/tenant_access_token/internal')
        return {
          kind: 'answer',
          status: 200,
          body: JSON.stringify({ code: 0, msg: 'ok', tenant_access_token: 't-123', expire: 7200 }),
        };
      if (hit.url.startsWith('/open-apis/im/v1/messages')) {
        feishuSends++;
        return feishuSends === 1
          ? { kind: 'hang' }
          : {
              kind: 'answer',
              status: 200,
              body: JSON.stringify({ code: 0, msg: 'success', data: { message_id: 'om_1' } }),
            };
      }
      return { kind: 'hang' };
    };
    effects = effectsModule();
    h = await harness({
      dialect,
      channels: {
        chat: {
          type: 'slack',
          token_env: 'SLACK_BOT',
          channel: CHANNEL,
          api_url: `${rx.url}/api/chat.postMessage`,
        },
        hooked: { type: 'slack', url: `${rx.url}/api/hook` },
        receiver: {
          type: 'webhook',
          url: `${rx.url}/hook`,
          secret_env: 'HOOK_SECRET',
          status_url: `${rx.url}/deliveries/{event_id}?view=status`,
        },
        tg: { type: 'telegram', token_env: 'TG_BOT', chat_id: 42, api_url: rx.url },
        lark: {
          type: 'feishu',
          app: { app_id: 'cli_test', app_secret_env: 'FS_SECRET', receive_id: 'oc_room', base_url: rx.url },
        },
      },
      module: {
        env: { SLACK_BOT: SLACK_TOKEN, TG_BOT: '123:abc', FS_SECRET: 'fs-secret', HOOK_SECRET: SECRET },
        reconcile: { afterMs: 0, maxChecks: 3 },
      },
      modules: [effects as Module],
    });
  });
  afterAll(async () => {
    await h.cleanup();
    await rx.close();
  });
  beforeEach(() => {
    mode.post = 'hang';
    hook.post = 'hang';
    delete hook.status;
  });

  async function unknownDelivery(destination: string) {
    const d = await h.enqueue(destination);
    await h.drain();
    const row = (await h.rows()).find((r) => r.id === d.id)!;
    expect(row.status).toBe('reconcile');
    return d;
  }
  const effectOf = async (id: string) =>
    (await effects.service()!.list({ limit: 500 })).find((e) => e.ref === id);

  it('finds a Slack message that was posted although the answer never came, and settles it as delivered', async () => {
    const d = await unknownDelivery('chat');
    expect((await effectOf(d.id))?.status).toBe('unknown');
    const posts = rx.hits.filter((x) => x.url === '/api/chat.postMessage').length;
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ found: 1 });
    const row = (await h.rows()).find((r) => r.id === d.id)!;
    expect(row.status).toBe('succeeded');
    // Asked, not re-sent.
    expect(rx.hits.filter((x) => x.url === '/api/chat.postMessage')).toHaveLength(posts);
    const history = rx.hits.filter((x) => x.url.startsWith('/api/conversations.history'));
    expect(history.length).toBeGreaterThan(0);
    expect(history.at(-1)!.headers['authorization']).toBe(`Bearer ${SLACK_TOKEN}`);
    const effect = await effectOf(d.id);
    expect(effect).toMatchObject({
      status: 'done',
      provider_id: posted.find((p) => p.event_id === d.eventId)!.ts,
    });
    const events = await h.events('integration.delivery');
    expect(events.filter((e) => e.type === 'integration.delivery.reconciled').at(-1)?.summary).toMatchObject({
      delivery_id: d.id,
      outcome: 'found',
    });
    // The trace of the cause shows the effect, the unknown receipt and the reconciled one.
    const trace = await effects.service()!.trace(d.eventId);
    expect(trace?.steps.map((s) => s.type)).toEqual(
      expect.arrayContaining([
        'agent.effect.prepared',
        'agent.effect.receipted',
        'integration.delivery.reconciled',
      ]),
    );
  });

  it('sends again a Slack message the channel does not have, once, and records it delivered', async () => {
    mode.post = 'lost';
    const d = await unknownDelivery('chat');
    mode.post = 'ok';
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ resent: 1 });
    expect((await effectOf(d.id))?.status).toBe('resendable');
    await h.drain();
    const row = (await h.rows()).find((r) => r.id === d.id)!;
    expect(row.status).toBe('succeeded');
    expect(posted.filter((p) => p.event_id === d.eventId)).toHaveLength(1);
    expect((await effectOf(d.id))?.status).toBe('done');
  });

  it('sends a Feishu app message again within the hour its uuid is kept, with the same uuid', async () => {
    const d = await unknownDelivery('lark');
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ resent: 1 });
    await h.drain();
    expect((await h.rows()).find((r) => r.id === d.id)!.status).toBe('succeeded');
    const sends = rx.hits.filter((x) => x.url.startsWith('/open-apis/im/v1/messages'));
    expect(sends).toHaveLength(2);
    const uuids = sends.map((x) => (JSON.parse(x.body) as { uuid: string }).uuid);
    expect(uuids[1]).toBe(uuids[0]);
  });

  it('leaves a Telegram send to a person: the Bot API cannot look a message up', async () => {
    const d = await unknownDelivery('tg');
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ unsettled: 1 });
    const row = (await h.rows()).find((r) => r.id === d.id)!;
    expect(row.status).toBe('reconcile');
    expect(row.last_error).toContain('telegram');
    const waiting = await effects.service()!.unsettled();
    expect(waiting.map((e) => e.ref)).toContain(d.id);
    // Asked once: a second pass does not ask again.
    expect(await h.delivery.reconciler()!.tick()).toEqual({ found: 0, resent: 0, unsettled: 0, later: 0 });
    // A person's replay takes it out of the list and gives it a fresh start.
    await h.delivery.service()!.replay({ ids: [d.id] });
    expect((await h.rows()).find((r) => r.id === d.id)!.status).toBe('pending');
    await h.drain();
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ unsettled: 1 });
  });

  it('leaves an incoming-webhook Slack send to a person: it cannot be read back', async () => {
    const d = await unknownDelivery('hooked');
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ unsettled: 1 });
    expect(await effectOf(d.id)).toMatchObject({ status: 'unsettled' });
    expect((await effectOf(d.id))?.detail).toContain('incoming webhook');
  });
  it('asks a webhook receiver its status URL, signed, and settles a send it received as delivered', async () => {
    const d = await unknownDelivery('receiver');
    const posts = () => rx.hits.filter((x) => x.url === '/hook');
    expect(posts()).toHaveLength(1);
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ found: 1 });
    expect((await h.rows()).find((r) => r.id === d.id)!.status).toBe('succeeded');
    expect(posts()).toHaveLength(1);
    const asked = rx.hits.filter((x) => x.url.startsWith('/deliveries/')).at(-1)!;
    expect(asked.url).toBe(`/deliveries/${d.eventId}?view=status`);
    expect(asked.headers['webhook-id']).toBe(d.eventId);
    expect(await effectOf(d.id)).toMatchObject({ status: 'done', provider_id: received.get(d.eventId) });
  });

  it('sends again, with the same webhook-id, a webhook its receiver answers 404 for', async () => {
    hook.post = 'lost';
    const d = await unknownDelivery('receiver');
    hook.post = 'ok';
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ resent: 1 });
    expect((await effectOf(d.id))?.status).toBe('resendable');
    await h.drain();
    expect((await h.rows()).find((r) => r.id === d.id)!.status).toBe('succeeded');
    const sends = rx.hits.filter((x) => x.url === '/hook' && x.headers['webhook-id'] === d.eventId);
    expect(sends).toHaveLength(2);
    expect(received.has(d.eventId)).toBe(true);
  });

  it('asks a webhook status URL again after a 503, and leaves a 403 to a person', async () => {
    const d = await unknownDelivery('receiver');
    hook.status = 503;
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ later: 1 });
    hook.status = 403;
    await h.services.db.query({
      text: 'UPDATE deliveries SET reconcile_next_at = NULL WHERE id = $1',
      values: [d.id],
    });
    expect(await h.delivery.reconciler()!.tick()).toMatchObject({ unsettled: 1 });
    const row = (await h.rows()).find((r) => r.id === d.id)!;
    expect(row.status).toBe('reconcile');
    expect(row.last_error).toBe('reconcile: webhook status: HTTP 403');
    expect(await effectOf(d.id)).toMatchObject({ status: 'unsettled' });
  });
});
