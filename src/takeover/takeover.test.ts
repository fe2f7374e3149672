import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import type { DeliveryPort, DeliveryView } from '../delivery/port.js';
import { deliveryPort } from '../delivery/port.js';
import { Relay } from '../log/relay.js';
import { coreModule } from '../server/core-routes.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { sessionWatchPort } from '../signals/port.js';
import { dialects } from '../store/testing.js';
import type { TaskService, TaskView } from '../tasks/port.js';
import { tasksPort } from '../tasks/port.js';
import { takeoverModule } from './module.js';
import { takeoverPort } from './port.js';

const OLD = '2026-01-01T00:00:00.000Z';

function delivery(id: string, status: 'dead' | 'reconcile'): DeliveryView {
  return {
    id,
    event_id: 'evt_1',
    correlation_id: 'c',
    destination: 'phone',
    channel_type: 'slack',
    status,
    attempts: 3,
    next_attempt_at: OLD,
    last_status: 500,
    last_error: status === 'dead' ? 'provider_error' : 'timeout after send',
    last_response: null,
    payload_ref: null,
    created_at: OLD,
    updated_at: status === 'dead' ? '2026-01-02T00:00:00.000Z' : '2026-01-03T00:00:00.000Z',
  };
}

const fakeDelivery = {
  list: async (f?: { status?: string }) => [delivery(`dlv_${f?.status}`, f?.status as 'dead' | 'reconcile')],
} as unknown as DeliveryPort;
const fakeTasks = {
  list: async (f: { state?: string }) =>
    f.state === 'failed'
      ? [
          {
            id: 'tsk_failed',
            title: 'Review PR #7',
            owner: 'bot',
            updated_at: '2026-01-04T00:00:00.000Z',
          } as TaskView,
        ]
      : [],
} as unknown as TaskService;
const fakeSessions = {
  stalled: async () => [
    { runtime: 'claude-code', session_id: 'abc123', since: Date.parse('2026-01-05T00:00:00Z') },
  ],
};

describe.each(await dialects())('the takeover queue on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  const get = async (query = '', role: 'admin' | 'approver' | 'agent' = 'approver') => {
    const res = await t!.app.request(`/v1/takeover${query}`, { headers: auth(role) });
    return {
      status: res.status,
      body: (await res.json()) as {
        items: { kind: string; id: string; act: string; summary: string }[];
        counts: Record<string, number>;
        error: { message: string };
      },
    };
  };

  it('lists every kind of wait, oldest first, each with what acts on it', async () => {
    t = await testApp({
      dialect,
      modules: [coreModule(), approvalsModule(), takeoverModule()],
      ports: [
        [deliveryPort, fakeDelivery],
        [tasksPort, fakeTasks],
        [sessionWatchPort, fakeSessions],
      ],
    });
    const asked = await t.app.request('/v1/approvals', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ action: 'deploy to prod', reason: 'release 1.2' }),
    });
    const approval = (await asked.json()) as { id: string };
    // A relay subscriber that fails until the relay parks the row.
    await t.services.relay.stop();
    await t.services.emit({ type: 'agent.progress.reported', correlation_id: 'c1' });
    const relay = new Relay(t.services.db, t.services.log, { maxAttempts: 1 });
    relay.subscribe({
      name: 'test.broken',
      version: '2',
      accepts: (type) => type === 'agent.progress.reported',
      handle: async () => {
        throw new Error('boom');
      },
    });
    await relay.runOnce();

    const { status, body } = await get();
    expect(status).toBe(200);
    expect(body.counts).toEqual({
      approval: 1,
      stalled_session: 1,
      delivery_unknown: 1,
      dead_letter: 1,
      failed_task: 1,
      dead_outbox_row: 1,
    });
    const items = body.items;
    expect(items.map((i) => i.kind)).toEqual([
      'dead_letter',
      'delivery_unknown',
      'failed_task',
      'stalled_session',
      // made by this test, now: newest
      ...(items[4]!.kind === 'approval' ? ['approval', 'dead_outbox_row'] : ['dead_outbox_row', 'approval']),
    ]);
    const apr = items.find((i) => i.kind === 'approval')!;
    expect(apr).toMatchObject({
      id: approval.id,
      act: `switchboard approvals approve|reject ${approval.id}`,
    });
    expect(apr.summary).toContain('deploy to prod: release 1.2');
    expect(items.find((i) => i.kind === 'dead_outbox_row')!.summary).toContain('test.broken@2: boom');

    const only = await get('?kind=dead_letter', 'admin');
    expect(only.body).toMatchObject({ counts: { dead_letter: 1 }, items: [{ id: 'dlv_dead' }] });
  });

  it('takes a source another module registers, and leaves out modules that are not running', async () => {
    t = await testApp({ dialect, modules: [coreModule(), takeoverModule()] });
    t.port(takeoverPort).register({
      kind: 'effect_unsettled',
      list: async () => [{ kind: 'effect_unsettled', id: 'eff_1', summary: 'x', since: OLD, act: 'y' }],
    });
    expect(() => t!.port(takeoverPort).register({ kind: 'dead_outbox_row', list: async () => [] })).toThrow(
      /already listed/,
    );
    const { body } = await get();
    expect(Object.keys(body.counts)).toEqual(['dead_outbox_row', 'effect_unsettled']);
    expect(body.items).toHaveLength(1);
  });

  it('is for people: an agent key gets 403; a bad query names the field', async () => {
    t = await testApp({ dialect, modules: [coreModule(), takeoverModule()] });
    expect((await get('', 'agent')).status).toBe(403);
    expect((await get('?kind=nope')).body.error.message).toMatch(/kinds: dead_outbox_row/);
    expect((await get('?limit=0')).status).toBe(400);
    expect((await get('?colour=red')).status).toBe(400);
  });
});
