import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth } from '../server/testing.js';
import {
  agentCommand,
  FAKE_BIN,
  harness,
  launchRequest,
  report,
  settled,
  type TasksHarness,
  taskEvents,
} from './testing.js';

const UNKNOWN = 'tsk_01HZZZZZZZZZZZZZZZZZZZZZZZ';

describe.each(await dialects())('GET /v1/tasks/:id (%s)', (dialect) => {
  let h: TasksHarness;
  beforeEach(async () => {
    h = await harness(dialect);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it('lets the task key read its own task and no other', async () => {
    const mine = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    const other = await h.runner.launch(await launchRequest(h, { type: 'notify' }));
    const key = (await report(h.workDir, mine.id)).env.SWITCHBOARD_KEY!;
    const headers = { authorization: `Bearer ${key}` };
    const own = await h.t.app.request(`/v1/tasks/${mine.id}`, { headers });
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({
      id: mine.id,
      state: 'working',
      action: 'command',
      trigger_id: 'pr-review',
    });
    expect((await h.t.app.request(`/v1/tasks/${other.id}`, { headers })).status).toBe(404);
    expect((await h.t.app.request(`/v1/tasks/${UNKNOWN}`, { headers })).status).toBe(404);
  });

  it('lets an admin read any task and answers 404 for an unknown or malformed id', async () => {
    const view = await h.runner.launch(await launchRequest(h, { type: 'notify' }));
    const res = await h.t.app.request(`/v1/tasks/${view.id}`, { headers: auth('admin') });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: view.id, state: 'completed', owner: 'alice', error: null });
    expect((await h.t.app.request(`/v1/tasks/${UNKNOWN}`, { headers: auth('admin') })).status).toBe(404);
    expect((await h.t.app.request('/v1/tasks/apr_nope', { headers: auth('admin') })).status).toBe(404);
  });

  it('refuses an agent key bound to no task, an approver, and no key at all', async () => {
    const view = await h.runner.launch(await launchRequest(h, { type: 'notify' }));
    expect((await h.t.app.request(`/v1/tasks/${view.id}`, { headers: auth('agent') })).status).toBe(403);
    expect((await h.t.app.request(`/v1/tasks/${view.id}`, { headers: auth('approver') })).status).toBe(403);
    expect((await h.t.app.request(`/v1/tasks/${view.id}`)).status).toBe(401);
  });
});

describe.each(await dialects())('POST /v1/tasks/:id/resume (%s)', (dialect) => {
  let h: TasksHarness;
  beforeEach(async () => {
    h = await harness(dialect, {
      module: { env: { PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}` } },
    });
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const post = (id: string, body: string, headers: Record<string, string> = auth('approver')) =>
    h.t.app.request(`/v1/tasks/${id}/resume`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  async function endedTask(runtime: string, sessionId?: string) {
    const view = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('ok'), runtime }),
    );
    if (sessionId) await h.runner.touch(view.id, { session_id: sessionId });
    await settled(h.runner, view.id);
    return view.id;
  }

  it('continues a claude-code session with the message on stdin, never in argv', async () => {
    const id = await endedTask('claude-code', 'sess-0001');
    const message = 'Also fix the lint errors; $(rm -rf /) is not a command';
    const res = await post(id, JSON.stringify({ message }));
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ id, state: 'working', session_id: 'sess-0001' });
    const r = await report<{ argv: string[]; stdin: string; input: string; task: string }>(
      h.workDir,
      id,
      'resume-report.json',
    );
    expect(r.argv).toEqual(['-p', '--resume', 'sess-0001']);
    expect(r.stdin).toBe(`# switchboard: message from me (approver) to continue this task.\n${message}`);
    expect(r.input).toBe(r.stdin);
    expect(r.task).toBe(id);
    expect((await settled(h.runner, id)).state).toBe('completed');
    const types = (await taskEvents(h, id)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(['agent.task.resumed', 'agent.task.completed']);
  });

  it('continues a codex session with `codex exec resume <id>`', async () => {
    const id = await endedTask('codex', 'th-42');
    expect((await post(id, JSON.stringify({ message: 'go on' }), auth('admin'))).status).toBe(202);
    const r = await report<{ argv: string[]; stdin: string }>(h.workDir, id, 'resume-report.json');
    expect(r.argv).toEqual(['exec', 'resume', 'th-42']);
    expect(r.stdin.endsWith('\ngo on')).toBe(true);
  });

  it('answers 409 with a clear message when no session id was learned', async () => {
    const id = await endedTask('claude-code');
    const res = await post(id, JSON.stringify({ message: 'go on' }));
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('conflict');
    expect(body.error.message).toContain('no session id');
  });

  it('answers 409 while the task is still running', async () => {
    const view = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang'), runtime: 'claude-code' }),
    );
    await h.runner.touch(view.id, { session_id: 's1' });
    expect((await post(view.id, JSON.stringify({ message: 'go on' }))).status).toBe(409);
  });

  it('answers 409 for a runtime without a resume command, and for a notify task', async () => {
    const id = await endedTask('hermes', 's1');
    const res = await post(id, JSON.stringify({ message: 'go on' }));
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      'tasks.resume.hermes',
    );
    const notify = await h.runner.launch(await launchRequest(h, { type: 'notify' }));
    expect((await post(notify.id, JSON.stringify({ message: 'go on' }))).status).toBe(409);
  });

  it('rejects malformed JSON, wrong types, unknown fields, empty messages and a wrong content type', async () => {
    const id = await endedTask('claude-code', 's1');
    expect((await post(id, '{"message":')).status).toBe(400);
    expect((await post(id, JSON.stringify({ message: 42 }))).status).toBe(400);
    expect((await post(id, JSON.stringify({ message: 'x', session_id: 'other' }))).status).toBe(400);
    expect((await post(id, JSON.stringify({ message: '' }))).status).toBe(400);
    expect((await post(id, JSON.stringify([]))).status).toBe(400);
    const text = await h.t.app.request(`/v1/tasks/${id}/resume`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...auth('approver') },
      body: 'go on',
    });
    expect(text.status).toBe(415);
  });

  it('rejects an oversized body with 413', async () => {
    const id = await endedTask('claude-code', 's1');
    const big = JSON.stringify({ message: 'x'.repeat(h.t.config.server.body_limit_bytes + 1) });
    expect((await post(id, big)).status).toBe(413);
  });

  it('answers 404 for an unknown task and 403 for an agent key, 401 without a key', async () => {
    expect((await post(UNKNOWN, JSON.stringify({ message: 'go on' }))).status).toBe(404);
    const id = await endedTask('claude-code', 's1');
    expect((await post(id, JSON.stringify({ message: 'go on' }), auth('agent'))).status).toBe(403);
    expect((await post(id, JSON.stringify({ message: 'go on' }), {})).status).toBe(401);
  });
});
