import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { notifyModule } from '../notify/module.js';
import { recordingDeliveries } from '../notify/testing.js';
import { outboundPort } from '../notify/port.js';
import { runtimesModule } from '../runtimes/module.js';
import { coreModule } from '../server/core-routes.js';
import { type SignalsModule, signalsModule } from './module.js';

const T0 = 1_800_000_000_000;
const MIN = 60_000;

function fixture(name: string, patch: Record<string, unknown> = {}): string {
  const raw = JSON.parse(
    readFileSync(new URL(`../runtimes/claude-code/fixtures/${name}.json`, import.meta.url), 'utf8'),
  );
  return JSON.stringify({ ...raw, ...patch });
}

describe.each(await dialects())('the stall watch for interactive sessions on %s', (dialect) => {
  let t: TestApp | undefined;
  let signals: SignalsModule;
  let clock = T0;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(cfg: Record<string, unknown> = {}) {
    clock = T0;
    signals = signalsModule();
    t = await testApp({
      dialect,
      now: () => clock,
      modules: [coreModule(), runtimesModule(), notifyModule(), signals],
      config: {
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        signals: cfg,
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return deliveries.seen;
  }

  async function hook(name: string, patch: Record<string, unknown> = {}) {
    const res = await t!.app.request('/v1/runtimes/claude-code/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: fixture(name, patch),
    });
    expect(res.status).toBe(200);
    await t!.services.relay.drain();
  }

  it('sends one stall notice on the priority lane for a tool that never completes, cleared by activity', async () => {
    const seen = await start();
    await hook('UserPromptSubmit');
    await hook('PreToolUse');
    clock += 9 * MIN;
    expect(await signals.stallDue()).toBe(0);
    clock += 2 * MIN;
    expect(await signals.stallDue()).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ destination: 'phone', priority: 'high' });
    expect(seen[0]?.message).toMatchObject({
      stage: 'blocked',
      summary: 'No activity for 11 min mid-turn · my-project',
    });
    expect(String(seen[0]?.message.detail)).toContain('session: abc123');
    // One notice per stall, however long it lasts.
    clock += 30 * MIN;
    expect(await signals.stallDue()).toBe(0);
    // The tool completes: the stall is over; a new one later is noticed again.
    await hook('PostToolUse');
    clock += 11 * MIN;
    expect(await signals.stallDue()).toBe(1);
    expect(seen).toHaveLength(2);
  });

  it('does not call waiting for a person, or a finished turn, a stall', async () => {
    const seen = await start();
    await hook('UserPromptSubmit');
    await hook('PreToolUse');
    await hook('Notification'); // permission_prompt: the dialog waits at the desk
    clock += 60 * MIN;
    expect(await signals.stallDue()).toBe(0);
    await hook('PostToolUse');
    await hook('Stop');
    const done = seen.length;
    clock += 60 * MIN;
    expect(await signals.stallDue()).toBe(0);
    expect(seen.length).toBe(done);
  });

  it('follows signals.stall_after_seconds, and 0 turns the watch off', async () => {
    await start({ stall_after_seconds: 60 });
    await hook('PreToolUse');
    clock += 61_000;
    expect(await signals.stallDue()).toBe(1);
    await t!.cleanup();
    await start({ stall_after_seconds: 0 });
    await hook('PreToolUse');
    clock += 600 * MIN;
    expect(await signals.stallDue()).toBe(0);
  });
});
