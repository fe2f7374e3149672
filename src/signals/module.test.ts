import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { notifyModule } from '../notify/module.js';
import { recordingDeliveries } from '../notify/testing.js';
import { runtimesModule } from '../runtimes/module.js';
import { coreModule } from '../server/core-routes.js';
import { signalsModule } from './module.js';
import { outboundPort } from '../notify/port.js';

const T0 = 1_800_000_000_000;

function fixture(runtime: string, name: string, patch: Record<string, unknown> = {}): string {
  const raw = JSON.parse(
    readFileSync(new URL(`../runtimes/${runtime}/fixtures/${name}.json`, import.meta.url), 'utf8'),
  );
  return JSON.stringify({ ...raw, ...patch });
}

describe.each(await dialects())('runtime signals on %s', (dialect) => {
  let t: TestApp | undefined;
  let clock = T0;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(signals: Record<string, unknown> = {}) {
    clock = T0;
    const notify = notifyModule();
    t = await testApp({
      dialect,
      now: () => clock,
      modules: [coreModule(), runtimesModule(), notify, signalsModule()],
      config: {
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        signals,
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return deliveries.seen;
  }

  async function hook(runtime: string, body: string) {
    const res = await t!.app.request(`/v1/runtimes/${runtime}/hooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body,
    });
    expect(res.status).toBe(200);
    await t!.services.relay.drain();
  }

  const away = (on: boolean) =>
    t!.app.request('/v1/away', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ away: on }),
    });

  const events = async (type: string) =>
    (await t!.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);

  it('sends one done message for a Claude Code Stop, with the last assistant message and the project', async () => {
    const seen = await start();
    await hook('claude-code', fixture('claude-code', 'Stop'));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toMatchObject({ stage: 'done', summary: 'Turn finished · my-project' });
    const detail = String(seen[0]?.message.detail);
    expect(detail).toContain("I've completed the refactoring.");
    expect(detail).toContain('session: abc123');
  });

  it('caps the summary of a long last assistant message', async () => {
    const seen = await start({ summary_max_chars: 40 });
    await hook('claude-code', fixture('claude-code', 'Stop', { last_assistant_message: 'x'.repeat(5000) }));
    const first = String(seen[0]?.message.detail).split('\n')[0] ?? '';
    expect(first.length).toBe(40);
    expect(first.endsWith('…')).toBe(true);
  });

  it('sends a Codex agent-turn-complete as done', async () => {
    const seen = await start();
    await hook('codex', fixture('codex', 'agent-turn-complete'));
    expect(seen[0]?.message).toMatchObject({ stage: 'done', summary: 'Turn finished · project' });
  });

  it('sends every finished turn of a session while away, folding a turn reported twice', async () => {
    const seen = await start();
    await away(true);
    for (const prompt_id of ['turn-1', 'turn-2', 'turn-3']) {
      await hook('claude-code', fixture('claude-code', 'Stop', { prompt_id }));
    }
    // Codex reports one turn twice (its Stop hook and its notify program): one message.
    const turn = { session_id: 'codex-1', turn_id: 'turn_9' };
    await hook('codex', fixture('codex', 'Stop', turn));
    await hook(
      'codex',
      fixture('codex', 'agent-turn-complete', { 'thread-id': 'codex-1', 'turn-id': 'turn_9' }),
    );
    expect(seen.map((d) => d.message.stage)).toEqual(['done', 'done', 'done', 'done']);
    const suppressed = await events('agent.notification.suppressed');
    expect(suppressed.map((e) => e.redacted_summary.reason)).toEqual(['done_already_sent']);
  });

  it('sends the first finished turn of a session at the desk and records the later ones', async () => {
    const seen = await start();
    await hook('claude-code', fixture('claude-code', 'Stop', { prompt_id: 'turn-1' }));
    const next = { prompt_id: 'turn-2', last_assistant_message: 'Tests added.' };
    await hook('claude-code', fixture('claude-code', 'Stop', next));
    expect(seen).toHaveLength(1);
    const suppressed = await events('agent.notification.suppressed');
    expect(suppressed.map((e) => e.redacted_summary.reason)).toEqual(['done_already_sent']);
  });

  it('folds ten idle prompts into one message while away', async () => {
    const seen = await start();
    await away(true);
    for (let i = 0; i < 10; i++) {
      clock = T0 + i * 60_000;
      await hook('claude-code', fixture('claude-code', 'Notification', { notification_type: 'idle_prompt' }));
    }
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ priority: 'high' });
    expect(seen[0]?.message).toMatchObject({ stage: 'blocked' });
    const folded = (await events('agent.notification.suppressed')).filter(
      (e) => e.redacted_summary.reason === 'idle_folded',
    );
    expect(folded).toHaveLength(9);
  });

  it("writes a busy session's activity clock at most every few seconds, and always after an idle prompt", async () => {
    await start();
    const clockOf = async () =>
      (
        await t!.services.db.query<{ updated_at: number }>({
          text: 'SELECT updated_at FROM signal_sessions WHERE session_key = $1',
          values: ['claude-code:abc123'],
        })
      ).map((r) => Number(r.updated_at));
    const tool = fixture('claude-code', 'PreToolUse');
    await hook('claude-code', tool);
    expect(await clockOf()).toEqual([T0]);
    clock = T0 + 1_000;
    await hook('claude-code', tool);
    expect(await clockOf()).toEqual([T0]);
    clock = T0 + 6_000;
    await hook('claude-code', tool);
    expect(await clockOf()).toEqual([T0 + 6_000]);
    clock = T0 + 6_500;
    await away(true);
    await hook('claude-code', fixture('claude-code', 'Notification', { notification_type: 'idle_prompt' }));
    clock = T0 + 7_000;
    await hook('claude-code', tool);
    expect(await clockOf()).toEqual([T0 + 7_000]);
  });

  it('sends an idle prompt again once the session was active in between', async () => {
    const seen = await start();
    await away(true);
    const idle = fixture('claude-code', 'Notification', { notification_type: 'idle_prompt' });
    await hook('claude-code', idle);
    await hook('claude-code', fixture('claude-code', 'UserPromptSubmit'));
    clock += 120_000;
    await hook('claude-code', idle);
    expect(seen).toHaveLength(2);
    expect(String(seen[1]?.message.detail)).toContain('waiting: 2 min');
  });

  it('sends a permission prompt on the priority lane as awaiting_approval while away', async () => {
    const seen = await start();
    await away(true);
    await hook('claude-code', fixture('claude-code', 'Notification'));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ priority: 'high' });
    expect(seen[0]?.message).toMatchObject({
      stage: 'awaiting_approval',
      summary: 'Needs your permission · my-project',
    });
    expect(String(seen[0]?.message.detail)).toContain('Claude needs your permission to use Bash');
  });

  it('only records a permission prompt while the owner is at the desk', async () => {
    const seen = await start();
    await hook('claude-code', fixture('claude-code', 'Notification'));
    expect(seen).toHaveLength(0);
    const [raised] = await events('agent.notification.raised');
    const [s] = await events('agent.notification.suppressed');
    expect(s?.causation_id).toBe(raised?.event_id);
    expect(s?.redacted_summary).toMatchObject({ reason: 'owner_not_away', signal: 'permission_prompt' });
  });

  it('treats a Gemini CLI ToolPermission notification as a permission prompt', async () => {
    const seen = await start();
    await away(true);
    await hook('gemini-cli', fixture('gemini-cli', 'Notification'));
    expect(seen[0]?.message).toMatchObject({ stage: 'awaiting_approval' });
  });

  it('sends failures whether or not the owner is away', async () => {
    const seen = await start();
    await hook('claude-code', fixture('claude-code', 'StopFailure'));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ priority: 'high' });
    expect(seen[0]?.message).toMatchObject({ stage: 'failed' });
    expect(String(seen[0]?.message.detail)).toContain('rate_limit: 429 Too Many Requests');
  });

  it('blocks a notification with a secret in it, and audits it without the secret', async () => {
    const seen = await start();
    const token = ['ghp', '_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'].join('');
    await hook(
      'claude-code',
      fixture('claude-code', 'Stop', { last_assistant_message: `pushed with ${token}` }),
    );
    expect(seen).toHaveLength(0);
    const [b] = await events('agent.notification.blocked');
    expect(b?.redacted_summary).toMatchObject({ reason: 'secret', secrets: ['github_token'] });
    const all = await t!.services.log.list({ limit: 1000 });
    expect(JSON.stringify(all)).not.toContain(token);
  });

  it('sends nothing per tool call', async () => {
    const seen = await start();
    await hook('claude-code', fixture('claude-code', 'PostToolUse'));
    await hook('claude-code', fixture('claude-code', 'SubagentStop'));
    expect(seen).toHaveLength(0);
  });

  it('turns a mapping off per runtime', async () => {
    const seen = await start({ runtimes: { 'claude-code': { turn_done: false } } });
    await hook('claude-code', fixture('claude-code', 'Stop'));
    await hook('codex', fixture('codex', 'Stop'));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toMatchObject({ summary: 'Turn finished · project' });
  });

  it('counts the owner as away after the configured quiet time without typed input', async () => {
    const seen = await start({ away: { auto_after_idle_seconds: 300 } });
    await hook('claude-code', fixture('claude-code', 'UserPromptSubmit'));
    await hook('claude-code', fixture('claude-code', 'Notification'));
    expect(seen).toHaveLength(0);
    clock += 301_000;
    await hook('claude-code', fixture('claude-code', 'Notification', { session_id: 'other' }));
    expect(seen).toHaveLength(1);
  });
});

describe.each(await dialects())('GET/PUT /v1/away on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start() {
    const notify = notifyModule();
    t = await testApp({
      dialect,
      modules: [coreModule(), notify, signalsModule()],
    });
  }

  const put = (body: string, headers: Record<string, string> = auth('admin'), type = 'application/json') =>
    t!.app.request('/v1/away', { method: 'PUT', headers: { 'content-type': type, ...headers }, body });

  it('switches away on and off and says who did', async () => {
    await start();
    const initial = await (await t!.app.request('/v1/away', { headers: auth('approver') })).json();
    expect(initial).toMatchObject({ away: false, effective: false, reason: 'never_set' });
    const on = await put(JSON.stringify({ away: true }), auth('approver'));
    expect(await on.json()).toMatchObject({ away: true, effective: true, changed_by: 'me' });
    const off = await put(JSON.stringify({ away: false }));
    expect(await off.json()).toMatchObject({ away: false, reason: 'switched_off', changed_by: 'ops' });
    const changed = (await t!.services.log.list({ type: 'agent.away.changed', limit: 10 })).map(
      (e) => e.envelope,
    );
    expect(changed.map((e) => [e.actor.user_id, e.redacted_summary.away])).toEqual([
      ['me', true],
      ['ops', false],
    ]);
  });

  it('lets an owner without a row of their own follow the tenant switch', async () => {
    await start();
    await put(JSON.stringify({ away: true }));
    const view = await (await t!.app.request('/v1/away?owner=alice', { headers: auth('admin') })).json();
    expect(view).toMatchObject({ owner: 'alice', away: true });
    await put(JSON.stringify({ away: false, owner: 'alice' }));
    const own = await (await t!.app.request('/v1/away?owner=alice', { headers: auth('admin') })).json();
    expect(own).toMatchObject({ owner: 'alice', away: false });
  });

  it('refuses malformed JSON, wrong types, unknown fields, other media types and oversized bodies', async () => {
    await start();
    expect((await put('{nope')).status).toBe(400);
    expect((await put(JSON.stringify({ away: 'yes' }))).status).toBe(400);
    expect((await put(JSON.stringify({ away: true, extra: 1 }))).status).toBe(400);
    expect((await put(JSON.stringify({ away: true }), auth('admin'), 'text/plain')).status).toBe(415);
    const big = JSON.stringify({ away: true, owner: 'x'.repeat(2_000_000) });
    expect((await put(big)).status).toBe(413);
    const long = await t!.app.request(`/v1/away?owner=${'x'.repeat(300)}`, { headers: auth('admin') });
    expect(long.status).toBe(400);
  });

  it('refuses agents and callers without a key', async () => {
    await start();
    expect((await put(JSON.stringify({ away: true }), auth('agent'))).status).toBe(403);
    expect((await t!.app.request('/v1/away', { headers: auth('agent') })).status).toBe(403);
    expect((await t!.app.request('/v1/away')).status).toBe(401);
  });
});
