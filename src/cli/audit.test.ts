import { describe, expect, it } from 'vitest';
import type { Trace } from '../effects/port.js';
import { formatTrace } from './audit.js';

/** `switchboard audit trace`: one line per step in log order, then each effect with what let it through. */
describe('audit trace lines', () => {
  const trace: Trace = {
    id: 'tsk_1',
    steps: [
      {
        seq: 3,
        event_id: 'evt_3',
        type: 'agent.effect.prepared',
        stage: 'effect',
        occurred_at: '2026-12-01T12:00:00.000Z',
        policy_revision: 'rev_1',
        facts: { effect_id: 'eff_1', capability_id: 'cap_1', tool: 'reach' },
      },
    ],
    effects: [
      {
        id: 'eff_1',
        idempotency_key: 'idk_ab',
        kind: 'reach',
        ref: 'door-1',
        target: 'door.open',
        status: 'done',
        plan_digest: 'sha256:00',
        capability_id: 'cap_1',
        policy_revision: 'rev_1',
        approval_id: 'apr_1',
        task_id: null,
        correlation_id: null,
        causation_id: null,
        provider_id: null,
        answer_digest: 'sha256:11',
        detail: null,
        prepared_event_id: 'evt_3',
        receipted_event_id: 'evt_4',
        created_at: '2026-12-01T12:00:00.000Z',
        updated_at: '2026-12-01T12:00:01.000Z',
      },
    ],
  };

  it('names the stage, the revision and the ids that tie a step to its neighbours', () => {
    const lines = formatTrace(trace).split('\n');
    expect(lines[0]).toBe('trace tsk_1: 1 steps, 1 effects');
    expect(lines[1]).toMatch(
      /#3 .* effect\s+agent\.effect\.prepared evt_3 rev=rev_1 effect_id=eff_1 capability_id=cap_1/,
    );
    expect(lines[3]).toBe(
      '  eff_1 reach → door.open done key=idk_ab plan=sha256:00 capability=cap_1 rev=rev_1 approval=apr_1 answer=sha256:11',
    );
  });
});
