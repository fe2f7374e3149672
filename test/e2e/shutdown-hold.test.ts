import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../../src/approvals/module.js';
import { gateModule } from '../../src/gate/module.js';
import { runtimesModule } from '../../src/runtimes/module.js';
import { parseConfig } from '../../src/server/config.js';
import { coreModule } from '../../src/server/core-routes.js';
import { type RunningServer, startServer } from '../../src/server/serve.js';
import { KEYS } from '../../src/server/testing.js';
import { dialects, freshStore, type TestStore } from '../../src/store/testing.js';

/**
 * Issue 21 point 5: a graceful stop while a Claude Code hook is held on its approval ends the hold as
 * "no decision" (Claude Code's own `ask` dialog at the desk), not a deny, and withdraws the approval so
 * none is left `pending`. A real gateway on a socket, a real hook over HTTP, the real stop.
 */
const RULES = [
  {
    id: 'deploys-need-a-person',
    when: 'tool == "Bash" && input.command.startsWith("deploy")',
    decision: 'require_approval',
    reason_code: 'DEPLOY',
  },
];

const preToolUse = {
  session_id: 'sess-stop',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/home/dev/project',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'deploy web --prod' },
  tool_use_id: 'toolu_stop',
};

describe.each(await dialects())('SIGTERM while a hook is held, on %s', (dialect) => {
  let store: TestStore | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await store?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers the held hook with Claude Code ask and leaves the approval expired, not pending', async () => {
    store = await freshStore(dialect);
    dataDir = mkdtempSync(join(tmpdir(), 'sb-stop-'));
    const gateway: RunningServer = await startServer(
      parseConfig({
        data_dir: dataDir,
        server: { port: 0 },
        rules: RULES,
        hooks: { approval_wait_seconds: 300 },
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
          ],
        },
      }),
      {
        db: store.db,
        logger: pino({ level: 'silent' }),
        env: {},
        defaultMetrics: false,
        modules: [coreModule(), approvalsModule(), gateModule(), runtimesModule()],
      },
    );
    const held = fetch(`${gateway.url}/v1/runtimes/claude-code/hooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
      body: JSON.stringify(preToolUse),
    });
    const approvalId = await pendingApproval(gateway);

    // What `serve` runs on SIGTERM (src/cli: the first signal drains and exits).
    const stopped = gateway.stop();
    const res = await held;
    await stopped;

    expect(res.status).toBe(200);
    const reply = (await res.json()) as { hookSpecificOutput: Record<string, string> };
    expect(reply.hookSpecificOutput).toMatchObject({
      hookEventName: 'PreToolUse',
      permissionDecision: 'ask',
    });
    expect(reply.hookSpecificOutput.permissionDecisionReason).toContain('GATEWAY_STOPPING');
    expect(reply.hookSpecificOutput.permissionDecisionReason).toContain(approvalId);

    // The store after the stop, from a second connection: nothing pending, the expiry in the log.
    const db = await store.reopen();
    try {
      const rows = await db.query<{ state: string }>({
        text: 'SELECT state FROM approvals WHERE id = $1',
        values: [approvalId],
      });
      expect(rows).toEqual([{ state: 'expired' }]);
      const events = await db.query<{ body: string | object }>({
        text: `SELECT body FROM events WHERE type = 'agent.approval.expired'`,
        values: [],
      });
      expect(events).toHaveLength(1);
      const body = events[0]!.body;
      const expired = (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown>;
      expect(expired.redacted_summary).toMatchObject({ approval_id: approvalId, reason: 'gateway_stopping' });
    } finally {
      await db.close();
    }
  });
});

/** Polls the approvals API until the held hook's approval exists (generous bound: a shared machine). */
async function pendingApproval(gateway: RunningServer): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${gateway.url}/v1/approvals?state=pending`, {
      headers: { authorization: `Bearer ${KEYS.approver}` },
    });
    const list = (await res.json()) as { approvals: { id: string }[] };
    if (list.approvals[0]) return list.approvals[0].id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the held hook never created an approval');
}
