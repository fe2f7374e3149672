import { afterEach, describe, expect, it } from 'vitest';
import { gatePort } from './port.js';
import { type GateHarness, gateHarness } from './service/testing.js';

const POLICY = `rules:
  - id: no-force-push
    match: { tools: [Bash] }
    when: 'input.command.contains("push --force")'
    decision: deny
    reason_code: FORCE_PUSH
  - id: deploys
    when: 'input.command.startsWith("deploy")'
    decision: require_approval
    reason_code: DEPLOY
`;

/** The console's two reads of the gate: the serving policy with its sources, and a dry run. */
describe('the gate’s policy view and dry run', () => {
  let h: GateHarness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it('lists the serving rules with the file and line each was written on', async () => {
    h = await gateHarness('sqlite', {
      module: { sources: () => [{ kind: 'text', name: 'team.yaml', text: POLICY }] },
    });
    const view = h.t.port(gatePort).policy!();
    expect(view.revision).toMatch(/^rev_/);
    expect(view.rules.map((r) => [r.id, r.decision, r.source])).toEqual([
      ['no-force-push', 'deny', { file: 'team.yaml', line: 2 }],
      ['deploys', 'require_approval', { file: 'team.yaml', line: 7 }],
    ]);
    expect(view.rules[0]!.tools).toEqual(['Bash']);
  });

  it('decides a dry run as the gate would, with no event, no approval and no capability', async () => {
    h = await gateHarness('sqlite', {
      module: { sources: () => [{ kind: 'text', name: 'team.yaml', text: POLICY }] },
    });
    const gate = h.t.port(gatePort);
    const before = await h.t.services.log.lastSeq();
    const asked = await gate.simulate!(
      { tool: 'Bash', input: { command: 'deploy prod' } },
      { name: 'bot', role: 'agent' },
    );
    expect(asked.decision).toMatchObject({ decision: 'require_approval', reason_code: 'DEPLOY' });
    expect(asked.decision.approval_id).toBeUndefined();
    expect(asked.considered).toContain('deploys');
    const allowed = await gate.simulate!({ tool: 'Read', input: {} }, { name: 'bot', role: 'agent' });
    expect(allowed.decision.decision).toBe('allow');
    expect(allowed.decision.capability).toBeUndefined();
    expect(await h.t.services.log.lastSeq()).toBe(before);
    const approvals = await h.t.services.db.query<{ n: number }>({
      text: 'SELECT COUNT(*) AS n FROM approvals',
    });
    expect(Number(approvals[0]!.n)).toBe(0);
  });
});
