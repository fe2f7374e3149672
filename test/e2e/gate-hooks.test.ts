import { afterEach, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/log/verify.js';
import { dialects } from '../../src/store/testing.js';
import { auth, type TestApp, testApp } from '../../src/server/testing.js';
import { gatePort } from '../../src/gate/port.js';

/**
 * The whole gate path with every real module (no fakes): a Claude Code hook reaches the runtimes route,
 * the gate decides under the configured rules, an approval is created, an approver decides it over
 * HTTP, and the held hook answers in Claude Code's native shape with a capability that verifies.
 */
const RULES = [
  {
    id: 'no-force-push',
    when: 'tool == "Bash" && input.command.contains("push --force")',
    decision: 'deny',
    reason_code: 'FORCE_PUSH',
  },
  {
    id: 'deploys-need-a-person',
    when: 'tool == "Bash" && input.command.startsWith("deploy")',
    decision: 'require_approval',
    reason_code: 'DEPLOY',
  },
];

function preToolUse(command: string) {
  return {
    session_id: 'sess-e2e',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/home/dev/project',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: 'toolu_e2e',
  };
}

describe.each(await dialects())('a Claude Code tool call through the real gate on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.cleanup();
  });

  const hook = (body: unknown) =>
    t.app.request('/v1/runtimes/claude-code/hooks', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('denies a force push with the rule’s reason, in Claude Code’s native reply', async () => {
    t = await testApp({ dialect, config: { rules: RULES } });
    const res = await hook(preToolUse('git push --force origin main'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { hookSpecificOutput: Record<string, string> };
    expect(body.hookSpecificOutput).toMatchObject({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
    });
    expect(body.hookSpecificOutput.permissionDecisionReason).toContain('FORCE_PUSH');
  });

  it('allows an ordinary command', async () => {
    t = await testApp({ dialect, config: { rules: RULES } });
    const body = (await (await hook(preToolUse('ls -la'))).json()) as {
      hookSpecificOutput?: Record<string, string>;
    };
    expect(body.hookSpecificOutput?.permissionDecision ?? 'allow').toBe('allow');
  });

  it('holds a deploy until an approver approves, then allows it with a capability bound to the plan', async () => {
    t = await testApp({ dialect, config: { rules: RULES, hooks: { approval_wait_seconds: 20 } } });
    const pending = hook(preToolUse('deploy web --prod'));
    let approvalId: string | undefined;
    for (let i = 0; i < 100 && !approvalId; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const list = (await (
        await t.app.request('/v1/approvals?state=pending', { headers: auth('approver') })
      ).json()) as {
        approvals: { id: string }[];
      };
      approvalId = list.approvals[0]?.id;
    }
    expect(approvalId).toMatch(/^apr_/);
    // The agent cannot approve its own request.
    const self = await t.app.request(`/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(self.status).toBe(403);
    const decided = await t.app.request(`/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { ...auth('approver'), 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ship it' }),
    });
    expect(decided.status).toBe(200);
    const reply = (await (await pending).json()) as { hookSpecificOutput: Record<string, string> };
    expect(reply.hookSpecificOutput.permissionDecision).toBe('allow');

    const view = (await (
      await t.app.request(`/v1/approvals/${approvalId}`, { headers: auth('approver') })
    ).json()) as {
      status: string;
      capability?: { token: string };
    };
    expect(view.status).toBe('approved');
    expect(view.capability?.token).toBeTruthy();
    const verify = async (command: string) =>
      (await (
        await t.app.request('/v1/capabilities/verify', {
          method: 'POST',
          headers: { ...auth('admin'), 'content-type': 'application/json' },
          body: JSON.stringify({ token: view.capability!.token, plan: { tool: 'Bash', input: { command } } }),
        })
      ).json()) as { valid: boolean; reason?: string };
    expect(await verify('deploy web --prod')).toMatchObject({ valid: true });
    expect(await verify('deploy web --prod && rm -rf /')).toMatchObject({
      valid: false,
      reason: 'PLAN_MISMATCH',
    });

    const types = (await t.services.log.list({ limit: 200 })).map((e) => e.envelope.type);
    expect(types).toEqual(
      expect.arrayContaining(['agent.tool.requested', 'agent.approval.requested', 'agent.approval.approved']),
    );
  });

  it('writes the hook, its request and the decision in one transaction, each caused by the hook', async () => {
    t = await testApp({ dialect, config: { rules: RULES } });
    const before = (await t.services.log.list({ limit: 1000 })).length;
    const res = await hook(preToolUse('git push --force origin main'));
    expect(res.status).toBe(200);
    const events = (await t.services.log.list({ limit: 1000 })).slice(before).map((e) => e.envelope);
    const requested = events.filter((e) => e.type === 'agent.tool.requested');
    expect(requested).toHaveLength(1);
    const denied = events.find((e) => e.type === 'agent.tool.denied');
    expect(denied?.causation_id).toBe(requested[0]!.event_id);
    expect(denied?.correlation_id).toBe(requested[0]!.correlation_id);
  });

  it('records the hook once even when the gate fails inside its transaction, and fails closed', async () => {
    t = await testApp({ dialect, config: { rules: RULES } });
    const real = t.port(gatePort);
    // A gate that records the hook in its transaction and then breaks: the transaction rolls back.
    t.provide(gatePort, {
      evaluate: (intent, ctx) =>
        real.evaluate(intent, {
          ...ctx,
          ...(ctx.record
            ? {
                record: async (tx) => {
                  await ctx.record!(tx);
                  throw new Error('the policy engine crashed');
                },
              }
            : {}),
        }),
    });
    const before = (await t.services.log.list({ limit: 1000 })).length;
    const body = (await (await hook(preToolUse('rm -rf build'))).json()) as {
      hookSpecificOutput: Record<string, string>;
    };
    // Fails closed to Claude Code's own desk dialog (issue 21 point 5), never to an allow.
    expect(body.hookSpecificOutput.permissionDecision).toBe('ask');
    expect(body.hookSpecificOutput.permissionDecisionReason).toContain('the policy engine crashed');
    const events = (await t.services.log.list({ limit: 1000 })).slice(before).map((e) => e.envelope);
    expect(events.filter((e) => e.type === 'agent.tool.requested')).toHaveLength(1);
    const denied = events.find((e) => e.type === 'agent.tool.denied');
    expect(denied?.redacted_summary.reason_code).toBe('GATE_UNAVAILABLE');
    expect(await verifyChain(t.services.db)).toMatchObject({ ok: true });
  });
});
