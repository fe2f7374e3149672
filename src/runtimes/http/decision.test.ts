import { describe, expect, it } from 'vitest';
import type { ApprovalView } from '../../approvals/port.js';
import { RUNTIMES } from '../index.js';
import type { RuntimeKind } from '../runtime.js';
import { afterWait, holdMs } from './decision.js';

const held = {
  decision: 'require_approval' as const,
  reason_code: 'DEPLOY',
  plan_digest: 'sha256:x',
  approval_id: 'apr_1',
};
const view = (over: Partial<ApprovalView>): ApprovalView => ({
  id: 'apr_1',
  state: 'approved',
  action: 'deploy',
  reason: 'DEPLOY',
  plan_digest: 'sha256:x',
  task_id: null,
  requested_by: 'bot',
  created_at: '',
  expires_at: '',
  decided_at: '',
  decided_by: 'me',
  comment: null,
  ...over,
});

describe('a held approval’s outcome', () => {
  it('allows with the capability when approved and re-checked', () => {
    const cap = { id: 'cap_1', expires_at: '', token: 't' };
    expect(
      afterWait(held, view({ capability: cap, recheck: { outcome: 'capability', reason_code: 'APPROVED' } })),
    ).toMatchObject({
      decision: 'allow',
      capability: cap,
    });
  });

  it('denies when a person approved but the current policy no longer allows the plan', () => {
    const d = afterWait(
      held,
      view({ recheck: { outcome: 'no_capability', reason_code: 'FROZEN_READ_ONLY' } }),
    );
    expect(d).toMatchObject({ decision: 'deny', reason_code: 'APPROVAL_RECHECK_DENIED' });
    expect(d.reason).toContain('FROZEN_READ_ONLY');
  });

  it('keeps the ask while the approval is pending, and denies when rejected or expired', () => {
    expect(afterWait(held, view({ state: 'pending' }))).toBe(held);
    expect(afterWait(held, view({ state: 'rejected' })).decision).toBe('deny');
    expect(afterWait(held, view({ state: 'expired' })).reason_code).toBe('APPROVAL_EXPIRED');
  });
});

describe('how long a hook is held for an approval', () => {
  const runtime = (kind: RuntimeKind) => RUNTIMES[kind];

  it('holds as long as each runtime allows, minus a margin, when no wait is configured', () => {
    expect(holdMs(runtime('claude-code'), undefined)).toBe(590_000);
    expect(holdMs(runtime('codex'), undefined)).toBe(590_000);
    expect(holdMs(runtime('gemini-cli'), undefined)).toBe(50_000);
    expect(holdMs(runtime('hermes'), undefined)).toBe(50_000);
    expect(holdMs(runtime('openclaw'), undefined)).toBe(9_600);
    expect(holdMs(runtime('cursor'), undefined)).toBe(0);
  });

  it('holds a configured wait when it is shorter, and never past the runtime or the bridge', () => {
    expect(holdMs(runtime('claude-code'), 120)).toBe(120_000);
    expect(holdMs(runtime('hermes'), 3600)).toBe(50_000);
    expect(holdMs(runtime('claude-code'), undefined, 590_000)).toBe(588_000);
    expect(holdMs(runtime('claude-code'), 0)).toBe(0);
  });
});
