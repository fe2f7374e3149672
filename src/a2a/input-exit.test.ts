import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Task, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import { type ApprovalService, approvalsPort } from '../approvals/port.js';
import { deliveryModule } from '../delivery/module.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { tasksModule } from '../tasks/module.js';
import { type TaskService, tasksPort } from '../tasks/port.js';
import { a2aModule } from './module.js';
import {
  type A2AGateway,
  a2aGateway,
  type PushReceiver,
  pushReceiver,
  sdkClient,
  userMessage,
  waitFor,
  sendText,
} from './testing.js';

/**
 * A skill whose agent asks for approval with its task-scoped key, holds for one second, and exits 0
 * with the approval still pending (an agent that gives up waiting, or whose turn ended).
 */
const askThenExit = `(async () => { const res = await fetch(new URL('/v1/approvals?wait=1', process.env.SWITCHBOARD_URL), { method: 'POST', headers: { authorization: 'Bearer ' + process.env.SWITCHBOARD_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'deploy.prod', reason: 'ship the reviewed change' }) }); await res.json(); process.exit(0); })().catch((e) => { process.stderr.write(String(e)); process.exit(5); })`;

/** The resume command: records the session (argv) and the message (stdin), then ends 0. */
const resumeScript =
  "let m = ''; process.stdin.on('data', (d) => (m += d)); process.stdin.on('end', () => { require('fs').writeFileSync(process.argv[1], process.argv[2] + '\\n' + m); process.exit(0); });";

function statusText(t: Task): string {
  const c = t.status?.message?.parts[0]?.content;
  return c?.$case === 'text' ? c.value : '';
}

/** A real process, a push receiver and two dialects on a shared 2-core machine: more than the default. */
const SLOW = 60_000;

describe.each(await dialects())(
  'an agent that exits while its A2A task is INPUT_REQUIRED, on %s',
  (dialect) => {
    let g: A2AGateway | undefined;
    let r: PushReceiver | undefined;
    afterEach(async () => {
      await g?.stop();
      await r?.close();
      g = undefined;
      r = undefined;
    });

    async function start(outFile: string) {
      r = await pushReceiver();
      g = await a2aGateway(dialect, {
        modules: [
          coreModule(),
          approvalsModule(),
          deliveryModule(),
          tasksModule({ runSupervisor: false }),
          a2aModule(),
        ],
        tasks: {
          resume: { 'claude-code': [process.execPath, '-e', resumeScript, outFile, '{{session_id}}'] },
        },
        config: {
          egress: { allow: ['127.0.0.1'] },
          auth: {
            keys: [
              { name: 'bot', role: 'agent', key: KEYS.agent },
              { name: 'me', role: 'approver', key: KEYS.approver },
            ],
          },
        },
        a2a: {
          skills: [
            {
              id: 'deploy',
              name: 'Deploy',
              description: 'Deploys after approval',
              action: {
                type: 'command',
                command: [process.execPath, '-e', askThenExit],
                runtime: 'claude-code',
              },
            },
          ],
        },
      });
      const client = await sdkClient(g.url);
      const sent = await sendText(client, 'deploy it', { push: { url: r.url, id: 'cfg-1' } });
      const get = () => client.getTask({ tenant: '', id: sent.id, historyLength: 0 });
      const tasks = g.gateway.kernel.ports.get(tasksPort) as TaskService;
      // The agent has exited (its Switchboard task ended) and the A2A task is still waiting.
      const held = await waitFor(async () => {
        const [sb] = await tasks.list!({ limit: 10 });
        if (sb?.state !== 'completed') return undefined;
        const t = await get();
        return statusText(t).includes('exited') ? { t, sb } : undefined;
      });
      return {
        client,
        sent,
        get,
        tasks,
        held,
        approvals: g.gateway.kernel.ports.get(approvalsPort) as ApprovalService,
      };
    }

    /** The push bodies for the task, as StreamResponse objects, in arrival order. */
    function pushes(taskId: string) {
      return r!.bodies
        .map((b) => JSON.parse(b) as { statusUpdate?: { taskId: string; status: { state: string } } })
        .filter((b) => b.statusUpdate?.taskId === taskId)
        .map((b) => b.statusUpdate!.status.state);
    }

    it(
      'stays INPUT_REQUIRED with the approval pending, and a message to it resumes the session to COMPLETED',
      async () => {
        const outFile = join(mkdtempSync(join(tmpdir(), 'sb-a2a-exit-')), 'resumed.txt');
        const { client, sent, get, tasks, held } = await start(outFile);
        expect(held.t.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        expect(statusText(held.t)).toMatch(
          /the agent exited while approval apr_\S+ was pending; send a message/,
        );
        expect(pushes(sent.id)).not.toContain('TASK_STATE_COMPLETED');
        // The agent's hooks told the tasks module its session, as a runtime's hook does.
        await tasks.touch(held.sb.id, { session_id: 'sess-0123456789', runtime: 'claude-code' });
        const resumed = (await client.sendMessage({
          tenant: '',
          message: { ...userMessage('approved by phone, go on'), taskId: sent.id, contextId: sent.contextId },
          configuration: undefined,
          metadata: undefined,
        })) as Task;
        expect(resumed.id).toBe(sent.id);
        expect(resumed.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(readFileSync(outFile, 'utf8')).toContain('approved by phone, go on');
        expect((await get()).metadata?.agent_exited).toBeUndefined();
        await waitFor(() => pushes(sent.id).includes('TASK_STATE_COMPLETED') || undefined);
        expect(pushes(sent.id).filter((s) => s === 'TASK_STATE_COMPLETED')).toHaveLength(1);
      },
      SLOW,
    );

    it(
      'fails with the reason when the pending approval is withdrawn after the agent exited, pushing FAILED once',
      async () => {
        const outFile = join(mkdtempSync(join(tmpdir(), 'sb-a2a-exit-')), 'resumed.txt');
        const { sent, get, held, approvals } = await start(outFile);
        const approvalId = held.t.metadata?.approval_id as string;
        expect(approvalId).toMatch(/^apr_/);
        expect(await approvals.withdraw!(approvalId, 'the gateway is stopping')).toBe(true);
        const failed = await waitFor(async () => {
          const t = await get();
          return t.status?.state === TaskState.TASK_STATE_FAILED ? t : undefined;
        });
        expect(statusText(failed)).toContain(
          `approval ${approvalId} expired undecided (the gateway is stopping)`,
        );
        await waitFor(() => pushes(sent.id).includes('TASK_STATE_FAILED') || undefined);
        // A replayed end of the approval changes nothing more.
        g!.gateway.services.log.notify();
        await new Promise((res) => setTimeout(res, 300));
        expect(pushes(sent.id).filter((s) => s === 'TASK_STATE_FAILED')).toHaveLength(1);
        expect(pushes(sent.id)).not.toContain('TASK_STATE_COMPLETED');
      },
      SLOW,
    );

    it(
      'is canceled by CancelTask although its agent has exited, pushing CANCELED once',
      async () => {
        const outFile = join(mkdtempSync(join(tmpdir(), 'sb-a2a-exit-')), 'resumed.txt');
        const { client, sent, get } = await start(outFile);
        const canceled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
        expect(canceled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
        expect((await get()).status!.state).toBe(TaskState.TASK_STATE_CANCELED);
        await waitFor(() => pushes(sent.id).includes('TASK_STATE_CANCELED') || undefined);
        await new Promise((res) => setTimeout(res, 300));
        expect(pushes(sent.id).filter((s) => s === 'TASK_STATE_CANCELED')).toHaveLength(1);
        const types = (await g!.gateway.services.log.list({})).map((e) => e.envelope.type);
        expect(types).toContain('agent.a2a_task.canceled');
      },
      SLOW,
    );
  },
);
