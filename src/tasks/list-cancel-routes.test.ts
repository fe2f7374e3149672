import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth, KEYS } from '../server/testing.js';
import { cancel as cliCancel, list as cliList } from '../cli/tasks.js';
import { agentCommand, harness, launchRequest, report, settled, type TasksHarness } from './testing.js';

/** `GET /v1/tasks` and `POST /v1/tasks/{id}/cancel` (issue 21 point 15), and the CLI over them. */
describe.each(await dialects())('listing and canceling tasks over HTTP (%s)', (dialect) => {
  let h: TasksHarness;
  beforeEach(async () => {
    h = await harness(dialect);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const get = (path: string, headers: Record<string, string> = auth('admin')) =>
    h.t.app.request(path, { headers });
  const post = (path: string, headers: Record<string, string> = auth('admin')) =>
    h.t.app.request(path, { method: 'POST', headers });

  it('lists the newest tasks first for an admin, filtered by state, and refuses a bad filter', async () => {
    const done = await h.runner.launch(await launchRequest(h, { type: 'notify' }));
    const running = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    const all = (await (await get('/v1/tasks')).json()) as { tasks: { id: string; state: string }[] };
    expect(all.tasks.map((t) => t.id)).toEqual([running.id, done.id]);
    const working = (await (await get('/v1/tasks?state=working')).json()) as { tasks: { id: string }[] };
    expect(working.tasks.map((t) => t.id)).toEqual([running.id]);
    for (const bad of ['?state=busy', '?limit=0', '?limit=501', '?color=red']) {
      const res = await get(`/v1/tasks${bad}`);
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    }
    await h.runner.cancel(running.id, { name: 'ops', role: 'admin' });
  });

  it('lets a task key list and cancel only its own task; an admin cancels any', async () => {
    const mine = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    const other = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    const key = (await report(h.workDir, mine.id)).env.SWITCHBOARD_KEY!;
    const headers = { authorization: `Bearer ${key}` };
    const own = (await (await get('/v1/tasks', headers)).json()) as { tasks: { id: string }[] };
    expect(own.tasks.map((t) => t.id)).toEqual([mine.id]);
    expect((await post(`/v1/tasks/${other.id}/cancel`, headers)).status).toBe(404);
    expect((await get('/v1/tasks', auth('agent'))).status).toBe(403);
    expect((await post(`/v1/tasks/${other.id}/cancel`, auth('approver'))).status).toBe(403);
    const canceled = await post(`/v1/tasks/${mine.id}/cancel`, headers);
    expect(canceled.status).toBe(200);
    expect(await canceled.json()).toMatchObject({ id: mine.id, state: 'canceled' });
    // Canceled once: again is a conflict (asked by an admin: the task's own key is revoked as it ends,
    // so once that has happened it gets 401).
    expect((await post(`/v1/tasks/${mine.id}/cancel`)).status).toBe(409);
    expect(await (await post(`/v1/tasks/${other.id}/cancel`)).json()).toMatchObject({ state: 'canceled' });
    await settled(h.runner, mine.id);
    await settled(h.runner, other.id);
  });

  it('switchboard tasks list and cancel talk to the gateway with an admin key', async () => {
    const server = createServer(getRequestListener(h.t.app.fetch));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const env = { SWITCHBOARD_KEY: KEYS.admin };
      const task = await h.runner.launch(
        await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
      );
      const lines: string[] = [];
      await cliList({ url, env, state: 'working', out: (l) => lines.push(l) });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^${task.id}  working`));
      lines.length = 0;
      await cliCancel(task.id, { url, env, out: (l) => lines.push(l) });
      expect(lines[0]).toMatch(new RegExp(`^${task.id}  canceled`));
      await expect(cliCancel('nope', { url, env })).rejects.toThrow('is not a task id');
      await settled(h.runner, task.id);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
