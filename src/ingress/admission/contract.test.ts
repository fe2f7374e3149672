import { afterEach, describe, expect, it } from 'vitest';
import { coreModule } from '../../server/core-routes.js';
import { type TestApp, testApp } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { tasksPort } from '../../tasks/port.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';
import { compileFilter } from './cel.js';

/** CONTRACT.md's trigger, word for word: `event` compares as the event's name. */
const CONTRACT_TRIGGER = {
  id: 'review-prs',
  source: 'github',
  when: 'event == "pull_request" && payload.action in ["opened", "synchronize"]',
  coalesce: {
    key: 'payload.repository.full_name + "#" + string(payload.pull_request.number)',
    window: '10s',
  },
  action: {
    type: 'command',
    command: ['claude', '-p', 'Review the pull request described in the attached file'],
  },
};

describe.each(await dialects())("the contract's trigger on %s", (dialect) => {
  let t: TestApp;
  let clock = Date.now();
  afterEach(async () => t?.cleanup());

  it('starts, and fires on a real pull_request delivery signed as GitHub signs it', async () => {
    clock = Date.now();
    const h = ingressHarness([CONTRACT_TRIGGER]);
    t = await testApp({ dialect, config: h.config, modules: [coreModule(), h.ingress], now: () => clock });
    const tasks = new FakeTasks();
    t.provide(tasksPort, tasks);
    const deliver = async (event: string, payload: unknown) => {
      const d = await githubDelivery(event, payload);
      const res = await t.app.request('/v1/ingress/github', {
        method: 'POST',
        headers: d.headers,
        body: d.body,
      });
      expect(res.status).toBeLessThan(300);
    };
    // Neither a closed PR nor another event with an `opened` action wakes it. The examples' closed PR
    // is newer (updated_at) than the opened one, so it comes last: before it, the opened one would be
    // out of order (admission/order.ts).
    await deliver('issues', githubExample('issues', 'opened'));
    await deliver('pull_request', githubExample('pull_request', 'opened'));
    await t.services.relay.drain();
    await deliver('pull_request', githubExample('pull_request', 'closed'));
    await t.services.relay.drain();
    const admitted = await t.services.log.list({ type: 'integration.webhook.admitted', limit: 10 });
    expect(admitted).toHaveLength(1);
    clock += 10_001;
    expect(await h.ingress.launchDue()).toBe(1);
    expect(tasks.launched).toHaveLength(1);
    expect(tasks.launched[0]?.req.trigger_id).toBe('review-prs');
    expect(tasks.launched[0]?.req.action).toMatchObject({
      type: 'command',
      command: CONTRACT_TRIGGER.action.command,
    });
  });
});

describe('trigger CEL', () => {
  const ctx = (name: string | null, action = 'opened') => ({
    event: {
      type: 'integration.webhook.accepted',
      event_id: 'evt_1',
      name,
      action,
      delivery_id: 'd-1',
      tenant_id: 'default',
      binding: {},
      lineage: { hop_count: 0, depth: 0 },
    },
    payload: { action },
    source: { name: 'github', type: 'github' },
  });
  const run = (expression: string, c = ctx('pull_request')) => {
    const compiled = compileFilter(expression);
    if (!compiled.ok) throw new Error(compiled.message);
    return compiled.run(c);
  };

  it('compares event with a name either way round, and keeps its fields', () => {
    expect(run('event == "pull_request"')).toEqual({ ok: true, value: true });
    expect(run('"pull_request" == event')).toEqual({ ok: true, value: true });
    expect(run('event != "push"')).toEqual({ ok: true, value: true });
    expect(run('event == "push"')).toEqual({ ok: true, value: false });
    expect(run('event.name == "pull_request" && event.action == "opened"')).toEqual({
      ok: true,
      value: true,
    });
    expect(run('event.lineage.depth < 3 && event.binding.size() == 0')).toEqual({ ok: true, value: true });
    // A source that names no event: nothing compares equal, and nothing errors.
    expect(run('event == "pull_request"', ctx(null))).toEqual({ ok: true, value: false });
  });

  it('names the variable, its type and the fix in a type error', () => {
    const inList = compileFilter('event in ["push", "pull_request"]');
    expect(inList).toMatchObject({ ok: false });
    if (!inList.ok) {
      expect(inList.message).toContain('no such overload: TriggerEvent in list<string>');
      expect(inList.message).toContain(
        '`event` is a TriggerEvent: compare it with an event name (event == "pull_request")',
      );
      expect(inList.message).toContain('event.name in ["push", "pull_request"]');
    }
    const source = compileFilter('source == "github"');
    expect(source.ok).toBe(false);
    if (!source.ok) expect(source.message).toContain('`source` is a map: read source.name or source.type');
  });
});
