import { describe, expect, it } from 'vitest';
import { evaluateApproved } from './approved.js';
import { checkCapability } from './capability.js';
import { evaluate } from './evaluate.js';
import { compileYaml, TEST_KEY } from './testing.js';
import type { Intent } from './types.js';

const deploy: Intent = { tool: 'Bash', input: { command: 'deploy web' }, resource: 'svc/web' };
const asks = compileYaml(
  'rules:\n  - { id: ask, when: \'input.command.startsWith("deploy")\', decision: require_approval, reason_code: DEPLOY }\n',
);
const ctx = { signer: { keys: [TEST_KEY] }, tenant_id: 't1', task: { id: 'tsk_1' } };

describe('evaluateApproved', () => {
  const frozen = evaluate(asks, deploy).plan_digest;

  it('turns a still-required approval into an allow with a capability for the frozen plan', () => {
    const { decision } = evaluateApproved(asks, deploy, ctx, frozen);
    expect(decision).toMatchObject({
      decision: 'allow',
      reason_code: 'APPROVED',
      matched_rules: [{ id: 'ask' }],
    });
    const verdict = checkCapability(decision.capability?.token ?? '', {
      keys: [TEST_KEY],
      plan: deploy,
      now: new Date(),
    });
    expect(verdict.ok).toBe(true);
  });

  it('denies when the plan is not the one the approver saw', () => {
    const changed = { ...deploy, input: { command: 'deploy web --all' } };
    const { decision } = evaluateApproved(asks, changed, ctx, frozen);
    expect(decision).toMatchObject({ decision: 'deny', reason_code: 'PLAN_CHANGED' });
    expect(decision.capability).toBeUndefined();
  });

  it('lets a policy that now denies win over the approval', () => {
    const denies = compileYaml('rules:\n  - { id: freeze, decision: deny, reason_code: CHANGE_FREEZE }\n');
    expect(evaluateApproved(denies, deploy, ctx, frozen).decision.reason_code).toBe('CHANGE_FREEZE');
  });

  it('fails closed when no policy is loaded', () => {
    expect(evaluateApproved(undefined, deploy, ctx, frozen).decision.decision).toBe('deny');
  });
});
