import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreModule } from '../../server/core-routes.js';
import { type TestApp, testApp } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { tasksModule } from '../../tasks/module.js';
import { type TaskService, tasksPort } from '../../tasks/port.js';
import type { TaskRunner } from '../../tasks/service.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';
import { LAUNCH_LEASE_MS } from './launcher.js';

/**
 * A crash between "launching" and "launched" never runs an agent twice. The agent here is a real
 * process started by the real task runner; it appends one line to a file each time it runs. A crash is
 * a launch that never returns (the process died: nothing after it runs); the restarted launcher is the
 * next pass after the lease, on the same database.
 */

const COMMENT = (out: string) => ({
  id: 'on-comment',
  source: 'github',
  when: 'event.name == "issue_comment" && payload.action == "created"',
  action: {
    type: 'command',
    command: [process.execPath, '-e', 'require("fs").appendFileSync(process.argv[1], "ran\\n")', out],
  },
});

type Crash = 'before the launch' | 'after the agent started';

describe.each(await dialects())('launch idempotency on %s', (dialect) => {
  let t: TestApp | undefined;
  let dir = '';
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function start(opts: { realTasks: boolean }) {
    dir = mkdtempSync(join(tmpdir(), 'sb-relaunch-'));
    const out = join(dir, 'runs.log');
    const h = ingressHarness([COMMENT(out)]);
    let clock = Date.now();
    const tasks = tasksModule({
      runSupervisor: false,
      env: { PATH: process.env.PATH ?? '' },
      config: { work_dir: join(dir, 'work'), kill_grace_seconds: 0.2 },
    });
    t = await testApp({
      dialect,
      config: h.config,
      modules: opts.realTasks ? [coreModule(), tasks, h.ingress] : [coreModule(), h.ingress],
      now: () => clock,
    });
    const deliver = async (delivery: string) => {
      const d = await githubDelivery('issue_comment', githubExample('issue_comment', 'created'), {
        delivery,
      });
      const res = await t!.app.request('/v1/ingress/github', {
        method: 'POST',
        headers: d.headers,
        body: d.body,
      });
      await t!.services.relay.drain();
      return res;
    };
    const runs = () =>
      t!.services.db.query<{ state: string; task_id: string | null }>({
        text: 'SELECT state, task_id FROM ingress_runs',
      });
    const deliveries = () =>
      t!.services.db.query<{ status: string }>({ text: 'SELECT status FROM ingress_deliveries' });
    const ran = () => (existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean).length : 0);
    const later = (ms: number) => {
      clock += ms;
    };
    return { ingress: h.ingress, runner: tasks.runner as TaskRunner, deliver, runs, deliveries, ran, later };
  }

  /** The real runner behind the port, except that its first launch "crashes" where the test says. */
  function crashing(runner: TaskRunner, at: Crash): TaskService {
    let crashed = false;
    const never = new Promise<never>(() => {});
    return {
      get: (id) => runner.get(id),
      touch: (id, o) => runner.touch(id, o),
      resume: (id, m, by) => runner.resume(id, m, by),
      findLaunch: (key) => runner.findLaunch(key),
      async launch(req) {
        if (crashed) return runner.launch(req);
        crashed = true;
        if (at === 'before the launch') return never;
        await runner.launch(req);
        return never;
      },
    };
  }

  const waitFor = async (fn: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!fn()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it.each<[Crash, string]>([
    ['before the launch', 'launches it once on restart'],
    ['after the agent started', 'adopts the task on restart instead of launching it again'],
  ])('with a crash %s, %s: the agent runs exactly once', async (at) => {
    const s = await start({ realTasks: true });
    t!.provide(tasksPort, crashing(s.runner, at));
    expect((await s.deliver('d-1')).status).toBe(202);
    // The first launcher: it claims the run and dies in the middle of the launch.
    void s.ingress.launchDue();
    await new Promise((r) => setTimeout(r, 200));
    expect((await s.runs())[0]?.state).toBe('launching');
    if (at === 'after the agent started') await waitFor(() => s.ran() === 1);

    // The restarted launcher, once the lease has run out.
    s.later(LAUNCH_LEASE_MS + 1);
    expect(await s.ingress.launchDue()).toBe(at === 'before the launch' ? 1 : 0);
    await waitFor(() => s.ran() >= 1);
    const [run] = await s.runs();
    expect(run?.task_id).toMatch(/^tsk_/);
    expect(['active', 'done']).toContain(run?.state);
    // The delivery stays processed: the sender's redelivery is a duplicate and launches nothing.
    expect(await s.deliveries()).toEqual([{ status: 'processed' }]);
    expect((await s.deliver('d-1')).status).toBe(200);
    s.later(LAUNCH_LEASE_MS + 1);
    await s.ingress.launchDue();
    await new Promise((r) => setTimeout(r, 300));
    expect(s.ran()).toBe(1);
  });

  it('fails a run whose task was recorded but never started, and lets the sender redeliver it', async () => {
    const s = await start({ realTasks: false });
    const fake = new FakeTasks();
    const findLaunch: TaskService['findLaunch'] = async () => ({
      task: { ...(await fake.launch(await anyRequest())), state: 'failed' },
      started: false,
    });
    async function anyRequest() {
      const cause = await t!.services.emit({ type: 'integration.webhook.accepted' });
      return {
        trigger_id: 'x',
        action: { type: 'notify' as const },
        trusted: {},
        untrusted: { ref: '', digest: '', text: '' },
        title: 'x',
        cause,
      };
    }
    t!.provide(tasksPort, Object.assign(fake, { findLaunch }));
    await s.deliver('d-2');
    await t!.services.db.query({ text: `UPDATE ingress_runs SET state = 'launching'` });
    s.later(LAUNCH_LEASE_MS + 1);
    expect(await s.ingress.launchDue()).toBe(0);
    expect(await s.runs()).toEqual([expect.objectContaining({ state: 'failed' })]);
    expect(await s.deliveries()).toEqual([{ status: 'failed' }]);
    expect(fake.launched).toHaveLength(1);
  });
});
