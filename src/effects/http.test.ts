import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Module } from '../kernel/module.js';
import { dialects } from '../store/testing.js';
import { harness, launchRequest, type TasksHarness } from '../tasks/testing.js';
import { effectsModule, type EffectsModule } from './module.js';
import { takeoverModule } from '../takeover/module.js';
import { auth } from '../server/testing.js';

/** Issue 20 point 1: a task `http` action is an effect; its POST carries the effect's key. */

describe.each(await dialects())('a task http action as an effect (%s)', (dialect) => {
  let h: TasksHarness;
  let effects: EffectsModule;
  const posted: { headers: Record<string, string> }[] = [];
  let answer: number | Error = 202;
  beforeEach(async () => {
    posted.length = 0;
    effects = effectsModule();
    h = await harness(dialect, {
      modules: [effects as Module, takeoverModule() as Module],
      module: {
        poster: async (req) => {
          posted.push(req);
          if (answer instanceof Error) throw answer;
          return { status: answer };
        },
      },
    });
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const action = { type: 'http' as const, url: 'http://127.0.0.1:9/hooks/agent' };

  it('records the POST with its receipt, and the key on the wire is the effect key', async () => {
    answer = 202;
    const req = await launchRequest(h, action);
    const view = await h.runner.launch(req);
    const [effect] = await effects.service()!.list({ task_id: view.id });
    expect(effect).toMatchObject({ kind: 'http', ref: view.id, status: 'done', detail: 'HTTP 202' });
    expect(posted[0]?.headers['idempotency-key']).toBe(effect!.idempotency_key);
    const trace = await effects.service()!.trace(view.id);
    const types = trace!.steps.map((s) => s.type);
    expect(types).toEqual(
      expect.arrayContaining(['agent.task.submitted', 'agent.effect.prepared', 'agent.effect.receipted']),
    );
    expect(types.indexOf('agent.effect.prepared')).toBeLessThan(types.indexOf('agent.effect.receipted'));
  });

  it('leaves a POST that timed out to a person: the endpoint may have acted', async () => {
    answer = Object.assign(new Error('send failed: timeout'), { code: 'timeout' });
    const view = await h.runner.launch(await launchRequest(h, action));
    expect(view.state).toBe('failed');
    const waiting = await effects.service()!.unsettled();
    expect(waiting.map((e) => e.ref)).toEqual([view.id]);
    // …and the takeover queue lists it for a person, with the command that shows its chain.
    const res = await h.t.app.request('/v1/takeover?kind=unsettled_effect', { headers: auth('admin') });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: { kind: string; id: string; act: string }[] };
    expect(body.items).toEqual([
      expect.objectContaining({
        kind: 'unsettled_effect',
        id: waiting[0]!.id,
        act: `switchboard audit trace ${waiting[0]!.id}`,
      }),
    ]);
  });

  it('records a refused answer as failed, not unsettled', async () => {
    answer = 500;
    const view = await h.runner.launch(await launchRequest(h, action));
    const [effect] = await effects.service()!.list({ task_id: view.id });
    expect(effect).toMatchObject({ status: 'failed', detail: 'HTTP 500' });
    expect(await effects.service()!.unsettled()).toEqual([]);
  });
});
