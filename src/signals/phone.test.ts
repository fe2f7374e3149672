import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { recordingDeliveries } from '../notify/testing.js';
import { promptText } from './phone.js';
import { outboundPort } from '../notify/port.js';
import { approvalsPort } from '../approvals/port.js';

/**
 * Permission prompts answered from the phone, with every real module (gate, approvals, runtimes,
 * notify, signals) and a delivery port that records what would go to the channel.
 */
const permissionRequest = (patch: Record<string, unknown> = {}) => {
  const raw = JSON.parse(
    readFileSync(new URL('../runtimes/claude-code/fixtures/PermissionRequest.json', import.meta.url), 'utf8'),
  ) as Record<string, unknown>;
  return JSON.stringify({ ...raw, ...patch });
};

const notification = JSON.stringify({
  session_id: 'abc123',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/home/user/my-project',
  hook_event_name: 'Notification',
  message: 'Claude needs your permission to use Bash',
  notification_type: 'permission_prompt',
});

const RULES = [
  { id: 'no-force-push', when: 'input.command.contains("--force")', decision: 'deny', reason_code: 'FORCE' },
];

interface HookReply {
  hookSpecificOutput?: { hookEventName: string; decision: { behavior: string; message?: string } };
}

describe.each(await dialects())('permission prompts on the phone on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(signals: Record<string, unknown> = {}) {
    t = await testApp({
      dialect,
      config: {
        server: { public_url: 'https://switchboard.example' },
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        rules: RULES,
        signals,
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return deliveries.seen;
  }

  const hook = (body: string) =>
    t!.app.request('/v1/runtimes/claude-code/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body,
    });

  const setAway = async (away: boolean) => {
    const res = await t!.app.request('/v1/away', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ away }),
    });
    expect(res.status).toBe(200);
  };

  const decide = (id: string, decision: 'approve' | 'reject', comment?: string) =>
    t!.app.request(`/v1/approvals/${id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ decision, ...(comment ? { comment } : {}) }),
    });

  async function pendingApproval(): Promise<string> {
    for (let i = 0; i < 200; i++) {
      const list = (await (
        await t!.app.request('/v1/approvals?state=pending', { headers: auth('approver') })
      ).json()) as { approvals: { id: string }[] };
      const id = list.approvals[0]?.id;
      if (id) return id;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no approval was created');
  }

  const events = async (type: string) =>
    (await t!.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);

  it('while away: the prompt becomes an approval with buttons, and approve on the phone allows', async () => {
    const seen = await start({ permissions: { wait_seconds: 30 } });
    await setAway(true);
    const pending = hook(permissionRequest());
    const id = await pendingApproval();
    await t!.services.relay.drain();
    const announced = seen.filter((s) => s.message.kind === 'approval');
    expect(announced).toHaveLength(1);
    expect(announced[0]?.priority).toBe('high');
    expect(announced[0]?.message).toMatchObject({
      stage: 'awaiting_approval',
      summary: 'Bash: rm -rf node_modules',
      actions: { approvalId: id },
    });
    expect(String(announced[0]?.message.detail)).toContain('Claude Code asks for permission to use Bash');
    expect(String(announced[0]?.message.detail)).toContain('project: my-project');
    expect(String(announced[0]?.message.detail)).toContain('session: abc123');

    expect((await decide(id, 'approve')).status).toBe(200);
    // A double tap: one decision, the second is refused and changes nothing.
    expect((await decide(id, 'reject')).status).toBe(409);
    const res = await pending;
    expect(res.status).toBe(200);
    expect((await res.json()) as HookReply).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
  });

  it('a Codex PermissionRequest goes to the phone the same way (the bridge form of the reply)', async () => {
    await start({ permissions: { wait_seconds: 30 } });
    await setAway(true);
    const body = readFileSync(
      new URL('../runtimes/codex/fixtures/PermissionRequest.json', import.meta.url),
      'utf8',
    );
    const pending = t!.app.request('/v1/runtimes/codex/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body,
    });
    const id = await pendingApproval();
    const [asked] = await events('agent.approval.requested');
    expect(String(asked?.redacted_summary.reason)).toContain('Codex asks for permission');
    expect((await decide(id, 'approve')).status).toBe(200);
    const reply = (await (await pending).json()) as { exitCode: number; stdout: string };
    expect(reply.exitCode).toBe(0);
    expect(JSON.parse(reply.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
  });

  it('reject on the phone denies with the reason', async () => {
    await start({ permissions: { wait_seconds: 30 } });
    await setAway(true);
    const pending = hook(permissionRequest());
    const id = await pendingApproval();
    expect((await decide(id, 'reject', 'not on a Friday')).status).toBe(200);
    const reply = (await (await pending).json()) as HookReply;
    expect(reply.hookSpecificOutput?.decision.behavior).toBe('deny');
    expect(reply.hookSpecificOutput?.decision.message).toContain('not on a Friday');
  });

  it('no answer: no decision after the wait, the approval expires and the phone is told', async () => {
    const seen = await start({ permissions: { wait_seconds: 1 } });
    await setAway(true);
    const started = Date.now();
    const res = await hook(permissionRequest());
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    // No decision: Claude Code shows its own dialog at the desk.
    expect(await res.json()).toEqual({});
    const [created] = await events('agent.approval.requested');
    const id = String(created?.redacted_summary.approval_id);
    // The approval lived as long as the hook waited; the sweeper marks it expired.
    await new Promise((r) => setTimeout(r, 50));
    await (t!.port(approvalsPort) as unknown as { expireDue(): Promise<number> }).expireDue();
    const view = await t!.port(approvalsPort).get(id);
    expect(view?.state).toBe('expired');
    // A tap after expiry changes nothing (410: it expired).
    expect((await decide(id, 'approve')).status).toBe(410);
    await t!.services.relay.drain();
    const told = seen.filter((s) => s.message.stage === 'blocked');
    expect(told).toHaveLength(1);
    expect(told[0]?.message.summary).toContain('waiting at the desk');
    expect(told[0]?.priority).toBe('high');

    // Claude Code raises its own "needs your permission" notification when the dialog appears: the
    // phone has already heard of this prompt, so it is folded, and audited.
    await hook(notification);
    await t!.services.relay.drain();
    expect(
      seen.filter((s) => s.message.stage === 'awaiting_approval' && s.message.kind !== 'approval'),
    ).toEqual([]);
    const folded = (await events('agent.notification.suppressed')).filter(
      (e) => e.redacted_summary.reason === 'approval_on_phone',
    );
    expect(folded).toHaveLength(1);
    expect(folded[0]?.redacted_summary.approval_id).toBe(id);
  });

  it('at the desk: no approval, no decision at once, and the log says why', async () => {
    const seen = await start();
    const res = await hook(permissionRequest());
    expect(await res.json()).toEqual({});
    await t!.services.relay.drain();
    expect(await events('agent.approval.requested')).toEqual([]);
    expect(seen).toEqual([]);
    const why = await events('agent.notification.suppressed');
    expect(why.map((e) => e.redacted_summary.reason)).toContain('owner_not_away');
  });

  it('a rule that decides answers at once, even while away', async () => {
    await start();
    await setAway(true);
    const res = await hook(permissionRequest({ tool_input: { command: 'git push --force' } }));
    const reply = (await res.json()) as HookReply;
    expect(reply.hookSpecificOutput?.decision.behavior).toBe('deny');
    expect(await events('agent.approval.requested')).toEqual([]);
  });

  it('permissions.to_phone: false keeps every prompt at the desk', async () => {
    await start({ permissions: { to_phone: false } });
    await setAway(true);
    expect(await (await hook(permissionRequest())).json()).toEqual({});
    expect(await events('agent.approval.requested')).toEqual([]);
  });

  it('a PreToolUse no rule decides gets no opinion, so Claude Code keeps its own permission flow', async () => {
    await start();
    await setAway(true);
    const res = await hook(
      JSON.stringify({
        session_id: 'abc123',
        transcript_path: '/tmp/t.jsonl',
        cwd: '/home/user/my-project',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'npm test' },
        tool_use_id: 'toolu_1',
      }),
    );
    expect(await res.json()).toEqual({});
    expect(await events('agent.approval.requested')).toEqual([]);
  });
});

describe('promptText', () => {
  it('says who asks, what would run and where, capped', () => {
    const t = promptText(
      'codex',
      { tool: 'Bash', input: { command: `echo ${'x'.repeat(300)}` } },
      { project: 'api', branch: 'main', session: 's1' },
    );
    expect(t.action.length).toBe(200);
    expect(t.action.endsWith('…')).toBe(true);
    expect(t.reason).toBe('Codex asks for permission to use Bash\nproject: api\nbranch: main\nsession: s1');
    expect(promptText('claude-code', { tool: 'WebFetch', input: {} }, {}).action).toBe('WebFetch');
  });
});
