import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReloadHub } from '../../kernel/reload.js';
import { configSpec } from '../../server/config.js';
import { watchConfig } from '../../server/reload.js';
import type { Envelope } from '../../envelope/index.js';
import { notifyModule } from '../../notify/module.js';
import { outboundPort } from '../../notify/port.js';
import { recordingDeliveries } from '../../notify/testing.js';
import { coreModule } from '../../server/core-routes.js';
import { auth, type TestApp, testApp } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { gateModule } from '../module.js';
import { SIGNER } from '../service/testing.js';

/** Issue 20 point 3: the gate freezes an agent or the tenant to read-only by itself. */
describe.each(await dialects())('the automatic breaker to read-only on %s', (dialect) => {
  let t: TestApp | undefined;
  const clock = { now: Date.parse('2026-06-01T10:00:00Z') };
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(breakers: unknown, rules: unknown[] = []) {
    clock.now = Date.parse('2026-06-01T10:00:00Z');
    t = await testApp({
      dialect,
      modules: [coreModule(), gateModule({ signerKey: SIGNER, watch: false, sighup: false }), notifyModule()],
      config: {
        rules,
        breakers,
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
      },
      now: () => clock.now,
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return deliveries.seen;
  }
  const post = (path: string, body: unknown, role: 'agent' | 'admin' = 'agent') =>
    t!.app.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(role) },
      body: JSON.stringify(body),
    });
  const decide = async (tool: string, input: Record<string, unknown>) => {
    const res = await post('/v1/gate/evaluate', { tool, input });
    expect(res.status).toBe(200);
    return ((await res.json()) as { decision: string; reason_code: string }).decision;
  };
  const events = async (type: string): Promise<Envelope[]> =>
    (await t!.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);
  const incidents = async () =>
    (await (await t!.app.request('/v1/incidents', { headers: auth('admin') })).json()) as {
      freezes: { scope: string; value: string; frozen_by: string; reason: string }[];
    };

  it('freezes an agent past 3 side effects a minute, announces it on the priority lane, and a person lifts it', async () => {
    const seen = await start({ agent: { side_effects: 3, window_seconds: 60 } });
    for (let i = 0; i < 3; i++) expect(await decide('Bash', { command: `make step-${i}` })).toBe('allow');
    await t!.services.relay.drain();
    expect((await incidents()).freezes).toEqual([]);

    expect(await decide('Bash', { command: 'make step-3' })).toBe('allow');
    await t!.services.relay.drain();
    const [tripped] = await events('agent.breaker.tripped');
    const authorized = await events('agent.tool.authorized');
    expect(tripped?.causation_id).toBe(authorized[3]?.event_id);
    expect(tripped?.redacted_summary).toMatchObject({
      scope: 'agent',
      value: 'bot',
      metric: 'side_effects',
      observed: 4,
      limit: 3,
      window_seconds: 60,
      figures: { side_effects: 4, decisions: 4, denied: 0, delivery_failures: 0 },
      tripped_by: { event_id: authorized[3]?.event_id, type: 'agent.tool.authorized' },
      lift: 'switchboard incidents unfreeze --agent bot',
    });
    const [frozen] = await events('agent.agent.frozen');
    expect(frozen?.redacted_summary).toMatchObject({ scope: 'agent', value: 'bot', by: 'breaker' });
    expect((await incidents()).freezes).toMatchObject([
      {
        scope: 'agent',
        value: 'bot',
        frozen_by: 'breaker',
        reason: 'breaker: 4 side effects in 60 s (limit 3)',
      },
    ]);

    // Read-only from here: a side effect is denied, a read goes on.
    expect(await decide('Bash', { command: 'make deploy' })).toBe('deny');
    expect(await decide('Read', { file_path: '/tmp/x' })).toBe('allow');

    const alert = seen.find((d) => d.priority === 'high');
    expect(alert?.message).toMatchObject({ kind: 'alert', severity: 'critical', agent: 'bot' });
    expect(String(alert?.message.summary)).toContain('Breaker: agent bot frozen to read-only');
    expect(String(alert?.message.detail)).toContain('switchboard incidents unfreeze --agent bot');
    const [sent] = await events('agent.notification.sent');
    expect(sent?.causation_id).toBe(tripped?.event_id);

    // The denies while frozen are not counted, and the trip cleared the counts: no second trip.
    expect((await post('/v1/incidents/unfreeze', { agent: 'bot' }, 'admin')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect(await decide('Bash', { command: `make again-${i}` })).toBe('allow');
    await t!.services.relay.drain();
    expect(await events('agent.breaker.tripped')).toHaveLength(1);
    expect((await incidents()).freezes).toEqual([]);
  });

  it('reloads: the thresholds follow a config edit without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-breakers-'));
    try {
      await start({ agent: { side_effects: 10 } });
      const file = join(dir, 'switchboard.yaml');
      const watch = watchConfig({
        path: file,
        spec: configSpec([coreModule(), gateModule({ watch: false, sighup: false }), notifyModule()]),
        serving: [],
        hub: t!.services.reloads as ReloadHub,
        logger: pino({ level: 'silent' }),
        watch: false,
        sighup: false,
      });
      try {
        for (let i = 0; i < 3; i++) expect(await decide('Bash', { command: `make a-${i}` })).toBe('allow');
        await t!.services.relay.drain();
        expect(await events('agent.breaker.tripped')).toHaveLength(0);

        // A broken edit changes nothing: the serving thresholds stay.
        writeFileSync(file, 'breakers:\n  agent: { window_seconds: 60 }\n');
        expect(watch.reload('manual').kind).toBe('rejected');
        expect(await decide('Bash', { command: 'make a-3' })).toBe('allow');
        await t!.services.relay.drain();
        expect(await events('agent.breaker.tripped')).toHaveLength(0);

        // Lowered to 2 while serving: the next side effect (the sixth in the window) trips it.
        writeFileSync(file, 'breakers:\n  agent: { side_effects: 2 }\n');
        expect(watch.reload('manual').kind).toBe('loaded');
        expect(await decide('Bash', { command: 'make a-4' })).toBe('allow');
        await t!.services.relay.drain();
        const [tripped] = await events('agent.breaker.tripped');
        expect(tripped?.redacted_summary).toMatchObject({ metric: 'side_effects', observed: 5, limit: 2 });

        // Removed: no breaker at all after the unfreeze.
        writeFileSync(file, 'rules: []\n');
        expect(watch.reload('manual').kind).toBe('loaded');
        expect((await post('/v1/incidents/unfreeze', { agent: 'bot' }, 'admin')).status).toBe(200);
        for (let i = 0; i < 5; i++) expect(await decide('Bash', { command: `make b-${i}` })).toBe('allow');
        await t!.services.relay.drain();
        expect(await events('agent.breaker.tripped')).toHaveLength(1);
      } finally {
        watch.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a trip stops capabilities minted before it for side effects; reads go on, and after the unfreeze new ones work', async () => {
    await start({ agent: { side_effects: 1 } });
    const grant = async (tool: string, input: Record<string, unknown>) => {
      const res = await post('/v1/gate/evaluate', { tool, input });
      const d = (await res.json()) as { decision: string; capability?: { token: string } };
      expect(d.decision).toBe('allow');
      return d.capability!.token;
    };
    const verify = async (token: string, tool: string, input: Record<string, unknown>) =>
      (await (await post('/v1/capabilities/verify', { token, plan: { tool, input } })).json()) as {
        valid: boolean;
        reason?: string;
        detail?: string;
      };
    const write = await grant('Bash', { command: 'make a' });
    const read = await grant('Read', { file_path: '/tmp/a' });
    expect((await verify(write, 'Bash', { command: 'make a' })).valid).toBe(true);

    expect(await decide('Bash', { command: 'make b' })).toBe('allow');
    await t!.services.relay.drain();
    expect(await events('agent.breaker.tripped')).toHaveLength(1);

    const refused = await verify(write, 'Bash', { command: 'make a' });
    expect(refused).toMatchObject({ valid: false, reason: 'FROZEN' });
    expect(refused.detail).toBe(
      'agent bot is frozen to read-only by breaker (breaker: 2 side effects in 60 s (limit 1)); switchboard incidents unfreeze --agent bot lifts it',
    );
    expect((await verify(read, 'Read', { file_path: '/tmp/a' })).valid).toBe(true);

    expect((await post('/v1/incidents/unfreeze', { agent: 'bot' }, 'admin')).status).toBe(200);
    const fresh = await grant('Bash', { command: 'make c' });
    expect((await verify(fresh, 'Bash', { command: 'make c' })).valid).toBe(true);
  });

  it('a tenant freeze by a person stops the capabilities already issued to its agents', async () => {
    await start({});
    const res = await post('/v1/gate/evaluate', { tool: 'Bash', input: { command: 'make' } });
    const { capability } = (await res.json()) as { capability: { token: string } };
    const tenant = t!.services.config.tenant.id;
    expect((await post('/v1/incidents/freeze', { tenant, reason: 'audit' }, 'admin')).status).toBe(200);
    const v = await post('/v1/capabilities/verify', {
      token: capability.token,
      plan: { tool: 'Bash', input: { command: 'make' } },
    });
    expect(await v.json()).toMatchObject({
      valid: false,
      reason: 'FROZEN',
      detail: expect.stringContaining('(audit)'),
    });
  });

  it('counts only inside the window', async () => {
    await start({ agent: { side_effects: 2, window_seconds: 60 } });
    for (let i = 0; i < 2; i++) expect(await decide('Bash', { command: `make ${i}` })).toBe('allow');
    await t!.services.relay.drain();
    clock.now += 61_000;
    expect(await decide('Bash', { command: 'make later' })).toBe('allow');
    await t!.services.relay.drain();
    expect(await events('agent.breaker.tripped')).toHaveLength(0);
  });

  it('freezes the tenant when more than 20 % of at least five decisions are denied', async () => {
    await start({ tenant: { denied_ratio: 0.2, min_decisions: 5 } }, [
      { id: 'no-rm', when: 'input.command.startsWith("rm ")', decision: 'deny', reason_code: 'NO_RM' },
    ]);
    // One deny of two: 50 %, but fewer than five decisions, so nothing trips yet.
    expect(await decide('Bash', { command: 'rm -rf /' })).toBe('deny');
    expect(await decide('Read', { file_path: '/a' })).toBe('allow');
    await t!.services.relay.drain();
    expect(await events('agent.breaker.tripped')).toHaveLength(0);
    expect(await decide('Read', { file_path: '/b' })).toBe('allow');
    expect(await decide('Read', { file_path: '/c' })).toBe('allow');
    expect(await decide('Bash', { command: 'rm -rf /home' })).toBe('deny');
    await t!.services.relay.drain();
    const [tripped] = await events('agent.breaker.tripped');
    const tenant = t!.services.config.tenant.id;
    expect(tripped?.redacted_summary).toMatchObject({
      scope: 'tenant',
      value: tenant,
      metric: 'denied_ratio',
      observed: 0.4,
      limit: 0.2,
      figures: { decisions: 5, denied: 2, denied_ratio: 0.4 },
    });
    expect((await incidents()).freezes).toMatchObject([{ scope: 'tenant', value: tenant }]);
    expect(await decide('Bash', { command: 'make' })).toBe('deny');
  });

  it('freezes the agent whose notifications fail more than five times, found through the causes', async () => {
    await start({ agent: { delivery_failures: 5 } });
    const res = await post('/v1/progress', { stage: 'failed', summary: 'deploy failed' });
    expect(res.status).toBe(200);
    const [sent] = await events('agent.notification.sent');
    // What the delivery engine appends per failed attempt (delivery/events.ts deliveryEvent): no actor.
    for (let i = 1; i <= 6; i++) {
      await t!.services.emit({
        type: i === 6 ? 'integration.delivery.dead' : 'integration.delivery.failed',
        causation_id: sent!.event_id,
        correlation_id: sent!.correlation_id,
        subject: { resource_ref: 'dlv_1' },
        redacted_summary: { delivery_id: 'dlv_1', destination: 'phone', channel: 'ntfy', attempt: i },
      });
    }
    await t!.services.relay.drain();
    const [tripped] = await events('agent.breaker.tripped');
    expect(tripped?.redacted_summary).toMatchObject({
      scope: 'agent',
      value: 'bot',
      metric: 'delivery_failures',
      observed: 6,
      limit: 5,
    });
  });
  it('does not count sends refused because their channel is revoked against the agent', async () => {
    await start({ agent: { delivery_failures: 2 } });
    const res = await post('/v1/progress', { stage: 'failed', summary: 'deploy failed' });
    expect(res.status).toBe(200);
    const [sent] = await events('agent.notification.sent');
    for (let i = 1; i <= 4; i++)
      await t!.services.emit({
        type: 'integration.delivery.dead',
        causation_id: sent!.event_id,
        correlation_id: sent!.correlation_id,
        subject: { resource_ref: `dlv_${i}` },
        redacted_summary: {
          delivery_id: `dlv_${i}`,
          destination: 'phone',
          channel: 'ntfy',
          channel_revoked: true,
        },
      });
    await t!.services.relay.drain();
    expect(await events('agent.breaker.tripped')).toHaveLength(0);
  });
});

describe('breakers config', () => {
  const start = (breakers: unknown) =>
    testApp({
      dialect: 'sqlite',
      modules: [coreModule(), gateModule({ watch: false, sighup: false })],
      config: { breakers },
    });
  it('stops start-up on a breaker without a threshold, naming the key', async () => {
    await expect(start({ agent: { window_seconds: 30 } })).rejects.toThrow(/breakers\.agent/);
    await expect(start({ agents: { deployer: { window_seconds: 30 } } })).rejects.toThrow(
      /breakers\.agents\.deployer/,
    );
    await expect(start({ tenant: { side_effects: 3, surprise: 1 } })).rejects.toThrow(/surprise/);
  });
});
