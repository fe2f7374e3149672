import { afterEach, describe, expect, it } from 'vitest';
import { deliveryModule } from '../delivery/module.js';
import { FAST, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../delivery/testing.js';
import { loopbackOnly } from '../egress/testing.js';
import { auth } from '../server/testing.js';
import { tasksPort } from '../tasks/port.js';
import { dialects } from '../store/testing.js';
import { type ConsoleHarness, consoleHarness, page, post } from './testing.js';

const DIALECTS = await dialects();

const RULES = [
  {
    id: 'no-force-push',
    when: 'input.command.contains("push --force")',
    decision: 'deny',
    reason_code: 'FORCE_PUSH',
  },
  {
    id: 'deploys',
    when: 'input.command.contains("deploy")',
    decision: 'require_approval',
    reason_code: 'DEPLOY',
  },
];

async function launchSleeper(h: ConsoleHarness) {
  const cause = await h.t.services.emit({ type: 'integration.webhook.admitted' });
  return h.t.port(tasksPort).launch({
    trigger_id: 'pages-test',
    action: { type: 'command', command: ['sleep', '30'] },
    trusted: {},
    untrusted: { ref: 'vault://none', digest: 'sha256:0', text: 'x' },
    owner: 'alice',
    title: 'A sleeping task',
    cause,
  });
}

describe.each(DIALECTS)('console pages on %s', (dialect) => {
  let h: ConsoleHarness;
  let rx: ScriptedReceiver | undefined;
  afterEach(async () => {
    await h?.cleanup();
    await rx?.close();
    rx = undefined;
  });

  it('changes nothing with any GET: no event, no session, no approval', async () => {
    h = await consoleHarness(dialect, { config: { rules: RULES } });
    const task = await launchSleeper(h);
    await h.t.app.request('/v1/approvals', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'a', reason: 'r' }),
    });
    const [event] = await h.t.services.log.list({ limit: 1 });
    const sessions = async () =>
      (await h.t.services.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM console_sessions' }))[0]!
        .n;
    const before = [await h.eventCount(), Number(await sessions())];
    for (const path of [
      '/console/',
      '/console/?fragment=1',
      '/console/approvals/count',
      '/console/tasks',
      `/console/tasks/${task.id}`,
      `/console/tasks/${task.id}?view=full`,
      '/console/sessions',
      '/console/events',
      `/console/events/${event!.envelope.event_id}`,
      '/console/events/verify',
      '/console/deliveries',
      '/console/policy',
      '/console/tools',
      '/console/metrics',
      '/console/metrics/data',
      '/console/login',
    ]) {
      const res = await page(h.t.app, path, h.admin);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    expect([await h.eventCount(), Number(await sessions())]).toEqual(before);
    await h.t.port(tasksPort).cancel!(task.id, { name: 'ops', role: 'admin' });
  });

  it('lists tasks with their state and filters them; a bad filter is a 400', async () => {
    h = await consoleHarness(dialect);
    const task = await launchSleeper(h);
    const html = await (await page(h.t.app, '/console/tasks?state=working', h.approver)).text();
    expect(html).toContain(`/console/tasks/${task.id}`);
    expect(html).toContain('A sleeping task');
    const none = await (await page(h.t.app, '/console/tasks?state=completed', h.approver)).text();
    expect(none).not.toContain(task.id);
    expect((await page(h.t.app, '/console/tasks?state=sleepy', h.approver)).status).toBe(400);
    expect((await page(h.t.app, '/console/tasks?owner=%3Cscript%3E', h.approver)).status).toBe(400);
    expect((await page(h.t.app, '/console/tasks/tsk_nope', h.approver)).status).toBe(404);
    await h.t.port(tasksPort).cancel!(task.id, { name: 'ops', role: 'admin' });
  });

  it('cancels a running task for an admin, refuses an approver, and answers 409 for an ended one', async () => {
    h = await consoleHarness(dialect);
    const task = await launchSleeper(h);
    const path = `/console/tasks/${task.id}/cancel`;
    expect((await post(h.t.app, path, h.approver)).status).toBe(403);
    const page1 = await (await page(h.t.app, `/console/tasks/${task.id}`, h.admin)).text();
    expect(page1).toContain('Cancel task');
    const res = await post(h.t.app, path, h.admin);
    expect(await res.json()).toEqual({ id: task.id, state: 'canceled' });
    const [event] = await h.t.services.log.list({ taskId: task.id, type: 'agent.task.canceled', limit: 1 });
    expect(event!.envelope.redacted_summary).toMatchObject({
      by: 'ops',
      role: 'admin',
      previous_state: 'working',
    });
    const again = await post(h.t.app, path, h.admin);
    expect(again.status).toBe(409);
    expect((await post(h.t.app, path, h.admin, { reason: 'x' })).status).toBe(400);
  });

  it('searches events by type and time, newest first, and pages back', async () => {
    h = await consoleHarness(dialect);
    for (let i = 0; i < 3; i++)
      await h.t.services.emit({ type: 'agent.progress.reported', subject: { tool: `t${i}` } });
    const html = await (await page(h.t.app, '/console/events?type=agent.progress.*', h.admin)).text();
    expect(html.indexOf('t2')).toBeLessThan(html.indexOf('t0'));
    const future = await (await page(h.t.app, '/console/events?since=2999-01-01T00:00', h.admin)).text();
    expect(future).toContain('Nothing here.');
    expect((await page(h.t.app, '/console/events?type=DROP%20TABLE', h.admin)).status).toBe(400);
    expect((await page(h.t.app, '/console/events?since=yesterday', h.admin)).status).toBe(400);
    expect((await page(h.t.app, '/console/events/evt_nope', h.admin)).status).toBe(404);
  });

  it('shows an event’s envelope and summary, and opens its raw payload only through the audited vault view', async () => {
    h = await consoleHarness(dialect);
    const stored = await h.t.services.vault.put('{"token":"raw-secret-value"}', { tenantId: 'default' });
    const env = await h.t.services.emit({
      type: 'integration.webhook.accepted',
      payload_ref: stored.ref,
      payload_digest: stored.digest,
      redacted_summary: { source: 'github' },
    });
    const detail = await (await page(h.t.app, `/console/events/${env.event_id}`, h.admin)).text();
    expect(detail).toContain('github');
    expect(detail).not.toContain('raw-secret-value');
    const path = `/console/events/${env.event_id}/payload`;
    expect((await post(h.t.app, path, h.approver)).status).toBe(403);
    expect((await post(h.t.app, path, h.admin, {}, { csrf: null })).status).toBe(403);
    expect(await h.t.services.log.list({ type: 'agent.payload.viewed', limit: 5 })).toEqual([]);
    const res = await post(
      h.t.app,
      path,
      h.admin,
      {},
      { headers: { accept: 'text/html', 'x-requested-with': '' } },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toContain('raw-secret-value');
    const [audit] = await h.t.services.log.list({ type: 'agent.payload.viewed', limit: 5 });
    expect(audit!.envelope.actor.user_id).toBe('ops');
    expect(audit!.envelope.causation_id).toBe(env.event_id);
    expect(audit!.envelope.redacted_summary).toMatchObject({
      payload_ref: stored.ref,
      by: 'ops',
      outcome: 'shown',
    });
    expect(JSON.stringify(audit!.envelope)).not.toContain('raw-secret-value');
  });

  it('verifies the chain: intact, then the first tampered row', async () => {
    h = await consoleHarness(dialect);
    for (let i = 0; i < 3; i++) await h.t.services.emit({ type: 'agent.progress.reported' });
    const ok = await page(h.t.app, '/console/events/verify', h.admin);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('The chain is intact');
    const [, second] = await h.t.services.log.list({ limit: 2 });
    await h.t.services.db.query({
      text: `UPDATE events SET body = replace(body, 'agent.progress.reported', 'agent.progress.reported ') WHERE seq = $1`,
      values: [second!.seq],
    });
    const bad = await page(h.t.app, '/console/events/verify', h.admin);
    expect(bad.status).toBe(409);
    const text = await bad.text();
    expect(text).toContain(`The chain is broken at event #${second!.seq}`);
    expect(text).toContain('hash_mismatch');
  });

  it('simulates an intent against the serving policy and writes nothing', async () => {
    h = await consoleHarness(dialect, { config: { rules: RULES } });
    const before = await h.eventCount();
    const res = await post(h.t.app, '/console/policy/simulate', h.admin, {
      tool: 'Bash',
      input: '{"command":"./deploy.sh prod"}',
    });
    const sim = (await res.json()) as {
      decision: {
        decision: string;
        matched_rules: { id: string }[];
        plan_digest: string;
        capability?: unknown;
        approval_id?: string;
      };
      considered: string[];
    };
    expect(sim.decision.decision).toBe('require_approval');
    expect(sim.decision.matched_rules.map((r) => r.id)).toEqual(['deploys']);
    expect(sim.decision.plan_digest).toMatch(/^sha256:/);
    expect(sim.decision.approval_id).toBeUndefined();
    const pasted = await post(h.t.app, '/console/policy/simulate', h.admin, {
      intent: '{"tool":"Bash","input":{"command":"git push --force"}}',
    });
    const denied = (await pasted.json()) as { decision: { decision: string; capability?: unknown } };
    expect(denied.decision.decision).toBe('deny');
    const allowed = await post(h.t.app, '/console/policy/simulate', h.admin, { tool: 'Read', input: '{}' });
    expect(
      ((await allowed.json()) as { decision: { capability?: unknown } }).decision.capability,
    ).toBeUndefined();
    expect(await h.eventCount()).toBe(before);
    const pageHtml = await (await page(h.t.app, '/console/policy', h.admin)).text();
    expect(pageHtml).toContain('no-force-push');
    expect(pageHtml).toContain('input.command.contains(&#34;deploy&#34;)');
  });

  it('classifies a runtime’s own tool name in a dry run, as the evaluate route does', async () => {
    const rules = [
      {
        id: 'no-shell-rm',
        match: { kinds: ['shell'] },
        when: 'args.command.contains("rm -rf")',
        decision: 'deny',
        reason_code: 'RM',
      },
    ];
    h = await consoleHarness(dialect, { config: { rules } });
    const res = await post(h.t.app, '/console/policy/simulate', h.admin, {
      tool: 'Bash',
      input: '{"command":"rm -rf /"}',
      runtime: 'claude-code',
    });
    const sim = (await res.json()) as { decision: { decision: string; matched_rules: { id: string }[] } };
    expect(sim.decision.decision).toBe('deny');
    expect(sim.decision.matched_rules.map((r) => r.id)).toEqual(['no-shell-rm']);
    const html = await (await page(h.t.app, '/console/policy', h.admin)).text();
    expect(html).toContain('kind shell');
  });

  it('answers a malformed simulation with a 4xx', async () => {
    h = await consoleHarness(dialect, { config: { rules: RULES } });
    const sim = (fields: Record<string, string>) =>
      post(h.t.app, '/console/policy/simulate', h.admin, fields);
    expect((await sim({ tool: 'Bash', input: '{nope' })).status).toBe(400);
    expect((await sim({ tool: 'Bash', input: '[1]' })).status).toBe(400);
    expect((await sim({ intent: '{"tool":"Bash","input":{},"colour":1}' })).status).toBe(400);
    expect((await sim({ tool: '', input: '{}' })).status).toBe(400);
    expect((await sim({ tool: 'Bash', runtime: 'emacs' })).status).toBe(400);
    expect((await sim({ tool: 'Bash', agent: 'a b' })).status).toBe(400);
    expect((await sim({ tool: 'Bash', bogus: '1' })).status).toBe(400);
  });

  it('groups dead letters by destination and error and replays them through the delivery port', async () => {
    rx = await startScriptedReceiver({ secret: SECRET });
    let status = 404;
    rx.script = () => ({ kind: 'answer', status });
    const delivery = deliveryModule({
      workers: false,
      env: { HOOK_SECRET: SECRET },
      egress: { dial: loopbackOnly },
      config: { ...FAST },
    });
    h = await consoleHarness(dialect, {
      replace: [delivery],
      config: {
        egress: { allow: ['127.0.0.1'] },
        channels: { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      ids.push(
        await h.t.services.db.tx(async (tx) => {
          const cause = await h.t.services.emit({ type: 'agent.progress.reported' }, tx);
          const m = {
            kind: 'progress',
            stage: 'done',
            severity: 'info',
            title: 't',
            summary: 's',
            eventId: cause.event_id,
          };
          return (
            await delivery
              .service()!
              .enqueue(tx, { eventId: cause.event_id, destination: 'hook', message: m })
          ).id;
        }),
      );
    }
    const drain = async () => {
      for (let i = 0; i < 20; i++) if ((await delivery.engine()!.runOnce()) === 0) break;
    };
    await drain();
    const html = await (await page(h.t.app, '/console/deliveries', h.admin)).text();
    expect(html).toMatch(/Dead letters <span class="n">2<\/span>/);
    expect(html).toContain('Replay 2');
    // Each dead delivery says how long it took from queued to dead.
    expect(html).toMatch(/data-label="Took"><div class="cell">(\d+ ms|\d+s)<\/div>/);
    const detail = await (await page(h.t.app, `/console/deliveries/${ids[0]}`, h.admin)).text();
    expect(detail).toContain('404');
    expect(detail).toMatch(/\d+ ms/);
    expect((await post(h.t.app, '/console/deliveries/replay', h.admin, { ids: 'dlv_bad' })).status).toBe(400);
    expect((await post(h.t.app, '/console/deliveries/replay', h.admin)).status).toBe(400);
    expect((await post(h.t.app, '/console/deliveries/replay', h.approver, { ids })).status).toBe(403);
    status = 204;
    const res = await post(h.t.app, '/console/deliveries/replay', h.admin, { ids });
    expect(((await res.json()) as { replayed: string[] }).replayed.sort()).toEqual([...ids].sort());
    await drain();
    const after = await delivery.service()!.list({ ids });
    expect(after.map((d) => d.status)).toEqual(['succeeded', 'succeeded']);
    expect(rx.hits.length).toBe(4);
    const again = await post(h.t.app, '/console/deliveries/replay', h.admin, { ids });
    expect(again.status).toBe(409);
    expect((await post(h.t.app, '/console/deliveries/test', h.admin, { destination: 'nope' })).status).toBe(
      404,
    );
    const test = await post(h.t.app, '/console/deliveries/test', h.admin, { destination: 'hook' });
    const { id: testId } = (await test.json()) as { id: string };
    await drain();
    expect((await delivery.service()!.list({ ids: [testId] }))[0]?.status).toBe('succeeded');
    expect(rx.hits.at(-1)!.body).toContain('Switchboard test message');
    const [sent] = await h.t.services.log.list({
      type: 'agent.notification.sent',
      newestFirst: true,
      limit: 1,
    });
    expect(sent!.envelope.redacted_summary).toMatchObject({ test: true, by: 'ops', destinations: ['hook'] });
  });
});
