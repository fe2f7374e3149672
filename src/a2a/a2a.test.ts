import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Artifact, type Task, TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { notifyModule } from '../notify/module.js';
import { type TaskService, tasksPort } from '../tasks/port.js';
import { KEYS } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import {
  type A2AGateway,
  OTHER_KEY,
  a2aGateway,
  defaultModules,
  nodeSkill,
  REPORTS,
  sdkClient,
  skills,
  userMessage,
  waitFor,
  sendText,
} from './testing.js';

const TERMINAL = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED];

async function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEYS.agent}`,
      'content-type': 'application/json',
      'a2a-version': '1.0',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    json: (await res.json()) as { result?: unknown; error?: { code: number; message: string } },
  };
}

/** The official @a2a-js/sdk client against a real listening gateway whose skills are real processes. */
describe.each(await dialects())('Switchboard as an A2A agent on %s', (dialect) => {
  let g: A2AGateway;
  afterEach(async () => {
    await g?.stop();
  });

  it('serves the v1.0 agent card without a key', async () => {
    g = await a2aGateway(dialect);
    const res = await fetch(`${g.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as {
      name: string;
      capabilities: unknown;
      supportedInterfaces: unknown[];
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: string } } };
      skills: { id: string }[];
    };
    expect(card.name).toBe('Switchboard');
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.supportedInterfaces).toContainEqual(
      expect.objectContaining({ url: `${g.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
    );
    expect(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme).toBe('bearer');
    expect(card.skills.map((s) => s.id)).toEqual(['review']);
  });

  it('runs a skill as a Switchboard task: SendMessage, then GetTask until COMPLETED', async () => {
    g = await a2aGateway(dialect);
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'please review this diff');
    expect(sent.id).toBeTruthy();
    const done = await waitFor(async () => {
      const t = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      return TERMINAL.includes(t.status!.state) ? t : undefined;
    });
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.history[0]!.parts[0]!.content).toEqual({ $case: 'text', value: 'please review this diff' });
    // The Switchboard task behind it went through the same states, in the log.
    const events = await g.gateway.services.log.list({});
    const types = events.map((e) => e.envelope.type);
    expect(types).toContain('agent.message.received');
    expect(types).toEqual(
      expect.arrayContaining(['agent.task.submitted', 'agent.task.started', 'agent.task.completed']),
    );
    // Another agent key does not see it; an admin does.
    const other = await sdkClient(g.url, OTHER_KEY);
    await expect(other.getTask({ tenant: '', id: sent.id, historyLength: undefined })).rejects.toThrow(
      /not found/i,
    );
    const admin = await sdkClient(g.url, KEYS.admin);
    expect((await admin.getTask({ tenant: '', id: sent.id, historyLength: undefined })).id).toBe(sent.id);
    const mine = await client.listTasks({
      tenant: '',
      contextId: '',
      status: 0,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(mine.tasks.map((t) => t.id)).toEqual([sent.id]);
    const theirs = await other.listTasks({
      tenant: '',
      contextId: '',
      status: 0,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(theirs.tasks).toEqual([]);
  });

  it('a blocking SendMessage answers with the ended task; a failing process is FAILED', async () => {
    g = await a2aGateway(dialect, {
      a2a: { skills: [{ id: 'broken', name: 'Broken', description: 'Exits 3', action: nodeSkill('fail') }] },
    });
    const client = await sdkClient(g.url);
    const task = (await client.sendMessage({
      tenant: '',
      message: userMessage('anything'),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  it('streams SendStreamingMessage frames from SUBMITTED to COMPLETED', async () => {
    g = await a2aGateway(dialect);
    const client = await sdkClient(g.url);
    const states: TaskState[] = [];
    const kinds: string[] = [];
    for await (const frame of client.sendMessageStream({
      tenant: '',
      message: userMessage('stream it'),
      configuration: undefined,
      metadata: undefined,
    })) {
      const p = frame.payload;
      if (p?.$case) kinds.push(p.$case);
      if (p?.$case === 'task') states.push(p.value.status!.state);
      if (p?.$case === 'statusUpdate') states.push(p.value.status!.state);
    }
    // The first frame is the task. The SDK fills it from the task store when it sends it, so on a busy
    // machine the run may already have started by then: SUBMITTED, or already WORKING.
    expect(kinds[0]).toBe('task');
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(states[0]);
    expect(states).toContain(TaskState.TASK_STATE_WORKING);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    // The updates after it never go back.
    const order = [
      TaskState.TASK_STATE_SUBMITTED,
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_COMPLETED,
    ];
    const ranks = states.map((s) => order.indexOf(s));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it("a launched agent's report_progress is the status message, its done report the task's artifact", async () => {
    g = await a2aGateway(dialect, { modules: [...defaultModules(), notifyModule()] });
    skills(g)[0]!.action = nodeSkill('report');
    const client = await sdkClient(g.url);
    const messages: string[] = [];
    const artifacts: Artifact[] = [];
    let taskId = '';
    for await (const frame of client.sendMessageStream({
      tenant: '',
      message: userMessage('review and report'),
      configuration: undefined,
      metadata: undefined,
    })) {
      const p = frame.payload;
      if (p?.$case === 'task') taskId = p.value.id;
      if (p?.$case === 'statusUpdate') {
        const part = p.value.status!.message?.parts[0]?.content;
        if (part?.$case === 'text') messages.push(`${p.value.status!.state}:${part.value}`);
      }
      if (p?.$case === 'artifactUpdate') artifacts.push(p.value.artifact!);
    }

    expect(messages).toContain(`${TaskState.TASK_STATE_WORKING}:${REPORTS[0]!.summary}`);
    const expected = [
      { content: { $case: 'text', value: REPORTS[1]!.summary } },
      { content: { $case: 'url', value: REPORTS[1]!.artifact } },
    ];
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]!.parts).toMatchObject(expected);
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]!.parts).toMatchObject(expected);
    // The reports were the Switchboard task's own (its task-scoped key), recorded in the log.
    const reports = (await g.gateway.services.log.list({})).filter(
      (e) => e.envelope.type === 'agent.progress.reported',
    );
    expect(reports).toHaveLength(2);
  });

  it("a second message in a context resumes the first task's session as a new task of that context", async () => {
    // The resume command: records the session it was given (argv) and the message (stdin), then ends.
    const resumeScript =
      "let m = ''; process.stdin.on('data', (d) => (m += d)); process.stdin.on('end', () => { require('fs').writeFileSync(process.argv[1], process.argv[2] + '\\n' + m); process.exit(0); });";
    const outFile = join(mkdtempSync(join(tmpdir(), 'sb-a2a-resume-')), 'resumed.txt');
    g = await a2aGateway(dialect, {
      tasks: { resume: { 'claude-code': [process.execPath, '-e', resumeScript, outFile, '{{session_id}}'] } },
      a2a: {
        skills: [
          {
            id: 'review',
            name: 'Review',
            description: 'Reviews',
            action: { ...nodeSkill('ok'), runtime: 'claude-code' },
          },
        ],
      },
    });
    const client = await sdkClient(g.url);
    const first = (await client.sendMessage({
      tenant: '',
      message: userMessage('review this'),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(first.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The agent's hooks tell the tasks module its session, as a runtime's hook does.
    const tasks = g.gateway.kernel.ports.get(tasksPort) as TaskService;
    const [sbTask] = await tasks.list!({ limit: 10 });
    await tasks.touch(sbTask!.id, { session_id: 'sess-0123456789', runtime: 'claude-code' });
    // Naming the ended task (and its context): the next turn is a new task of the same context.
    const follow = {
      ...userMessage('now check the tests too'),
      taskId: first.id,
      contextId: first.contextId,
    };
    const second = (await client.sendMessage({
      tenant: '',
      message: follow,
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(second.id).not.toBe(first.id);
    expect(second.contextId).toBe(first.contextId);
    expect(second.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const resumed = readFileSync(outFile, 'utf8');
    expect(resumed.split('\n')[0]).toBe('sess-0123456789');
    expect(resumed).toContain('now check the tests too');
    // The same Switchboard task ran again (no second launch), and the log says so.
    expect((await tasks.list!({ limit: 10 })).map((t) => t.id)).toEqual([sbTask!.id]);
    const types = (await g.gateway.services.log.list({})).map((e) => e.envelope.type);
    expect(types).toContain('agent.task.resumed');
    // The context alone (no task id) continues it too.
    const third = (await client.sendMessage({
      tenant: '',
      message: { ...userMessage('and the docs'), contextId: first.contextId },
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(third.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(readFileSync(outFile, 'utf8')).toContain('and the docs');
    const context = await client.listTasks({
      tenant: '',
      contextId: first.contextId,
      status: 0,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(context.tasks.map((t) => t.id)).toEqual([third.id, second.id, first.id]);
  });

  it("a skill's budget rejects the task past its per-day or concurrent limit, launching nothing", async () => {
    g = await a2aGateway(dialect, {
      a2a: {
        skills: [
          {
            id: 'daily',
            name: 'Daily',
            description: 'Twice a day',
            action: nodeSkill('ok'),
            budget: { per_day: 2 },
          },
          {
            id: 'one',
            name: 'One',
            description: 'One at once',
            action: nodeSkill('hang'),
            budget: { concurrent: 1 },
          },
        ],
      },
    });
    const client = await sdkClient(g.url);
    const send = async (skill: string, returnImmediately = false) =>
      (await client.sendMessage({
        tenant: '',
        message: userMessage(`to ${skill}`, { skill }),
        configuration: { returnImmediately, acceptedOutputModes: [], taskPushNotificationConfig: undefined },
        metadata: undefined,
      })) as Task;
    const states = [];
    for (let i = 0; i < 3; i++) states.push((await send('daily')).status!);
    expect(states.map((s) => s.state)).toEqual([
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_REJECTED,
    ]);
    const why = states[2]!.message!.parts[0]!.content;
    expect(why).toEqual({ $case: 'text', value: expect.stringContaining('budget.per_day') });
    const running = await send('one', true);
    await waitFor(async () => {
      const t = await client.getTask({ tenant: '', id: running.id, historyLength: undefined });
      return t.status!.state === TaskState.TASK_STATE_WORKING || undefined;
    });
    const refused = await send('one');
    expect(refused.status!.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(refused.status!.message!.parts[0]!.content).toEqual({
      $case: 'text',
      value: expect.stringContaining('budget.concurrent'),
    });
    // Two launches of daily and one of one: the rejected messages started no Switchboard task.
    const tasks = g.gateway.kernel.ports.get(tasksPort) as TaskService;
    expect(await tasks.list!({ limit: 10 })).toHaveLength(3);
    await client.cancelTask({ tenant: '', id: running.id, metadata: undefined });
  });

  it('CancelTask stops the process group; cancelling a completed task is TaskNotCancelable', async () => {
    g = await a2aGateway(dialect);
    const pidFile = join(g.workDir, 'hang.pid');
    skills(g)[0]!.action = nodeSkill('hang', pidFile);
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'never ends');
    const pid = await waitFor(() => {
      try {
        return Number(readFileSync(pidFile, 'utf8')) || undefined;
      } catch {
        return undefined;
      }
    });
    const canceled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(canceled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    skills(g)[0]!.action = nodeSkill('ok');
    const completed = (await client.sendMessage({
      tenant: '',
      message: userMessage('quick'),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(completed.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const refused = await rpc(g.url, {
      jsonrpc: '2.0',
      id: 7,
      method: 'CancelTask',
      params: { id: completed.id },
    });
    expect(refused.json.error?.code).toBe(-32002);
    // The spec's wording (and the SDK's default), with the task and its end in the ErrorInfo.
    expect(refused.json.error?.message).toBe('Task cannot be canceled');
    expect((refused.json.error as { data?: unknown }).data).toEqual([
      expect.objectContaining({
        reason: 'TASK_NOT_CANCELABLE',
        metadata: { taskId: completed.id, state: 'TASK_STATE_COMPLETED' },
      }),
    ]);
    for (const legacy of [false, true]) {
      const c = await sdkClient(g.url, undefined, legacy);
      const err = await c.cancelTask({ tenant: '', id: completed.id, metadata: undefined }).catch((e) => e);
      expect(err).toBeInstanceOf(TaskNotCancelableError);
      expect((err as Error).message).toBe('Task cannot be canceled');
    }
  });

  it('SubscribeToTask follows a running task until its cancel ends it', async () => {
    g = await a2aGateway(dialect);
    skills(g)[0]!.action = nodeSkill('hang');
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'follow me');
    const states: TaskState[] = [];
    const followed = (async () => {
      for await (const frame of client.resubscribeTask({ tenant: '', id: sent.id })) {
        const p = frame.payload;
        if (p?.$case === 'task') states.push(p.value.status!.state);
        if (p?.$case === 'statusUpdate') states.push(p.value.status!.state);
      }
    })();
    await waitFor(() => states.length > 0 || undefined);
    // Canceled as soon as it is followed: the cancel may overtake the launch, and must not be lost.
    await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    await followed;
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('speaks the v0.3 names through the SDK compat layer', async () => {
    g = await a2aGateway(dialect);
    const legacy = await sdkClient(g.url, KEYS.agent, true);
    const task = (await legacy.sendMessage({
      tenant: '',
      message: userMessage('old client'),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const raw = await rpc(
      g.url,
      { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: task.id } },
      { 'a2a-version': '' },
    );
    expect(raw.json.result).toMatchObject({ id: task.id, kind: 'task', status: { state: 'completed' } });
  });

  it('answers malformed JSON-RPC with the code and the field', async () => {
    g = await a2aGateway(dialect);
    expect((await rpc(g.url, '{not json')).json.error?.code).toBe(-32700);
    const noVersion = await rpc(g.url, { id: 1, method: 'GetTask', params: {} });
    expect(noVersion.json.error).toMatchObject({ code: -32600, message: expect.stringContaining('jsonrpc') });
    const noMethod = await rpc(g.url, { jsonrpc: '2.0', id: 1, params: {} });
    expect(noMethod.json.error).toMatchObject({ code: -32600, message: expect.stringContaining('method') });
    const badParams = await rpc(g.url, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: [1] });
    expect(badParams.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('params') });
    expect(
      (await rpc(g.url, { jsonrpc: '2.0', id: 1, method: 'NoSuchMethod', params: {} })).json.error?.code,
    ).toBe(-32601);
    const unknown = await rpc(g.url, { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'nope' } });
    expect(unknown.json.error?.code).toBe(-32001);
    const badSkill = await rpc(g.url, {
      jsonrpc: '2.0',
      id: 3,
      method: 'SendMessage',
      params: {
        message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: { skill: 'nope' } },
      },
    });
    expect(badSkill.json.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('message.metadata.skill'),
    });
    const big = await rpc(g.url, {
      jsonrpc: '2.0',
      id: 4,
      method: 'SendMessage',
      params: { pad: 'x'.repeat(1024 * 1024) },
    });
    expect(big.status).toBe(413);
    expect(big.json.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('a2a.max_message_bytes'),
    });
    const nokey = await fetch(`${g.url}/a2a`, { method: 'POST', body: '{}' });
    expect(nokey.status).toBe(401);
    expect((await g.gateway.services.log.list({})).map((e) => e.envelope.type)).not.toContain(
      'agent.message.received',
    );
  });
});
