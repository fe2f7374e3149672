import { describe, expect, it } from 'vitest';
import type { Envelope } from '../envelope/index.js';
import { formatEvent } from './events.js';

/** `switchboard events tail`: who did it, and summaries that end at a word. */
function envelope(over: Partial<Envelope>): Envelope {
  return {
    event_id: 'evt_1',
    type: 'agent.tool.denied',
    schema_version: 1,
    occurred_at: '2026-12-01T12:00:00.000Z',
    tenant_id: 'default',
    environment: 'dev',
    runtime: { kind: 'claude-code', adapter_version: '1' },
    actor: { user_id: null, agent_id: 'laptop-agent' },
    execution: { task_id: null, session_id: 'sess-42', turn_id: null, tool_call_id: null, attempt: 1 },
    correlation_id: null,
    causation_id: null,
    policy: { revision: null, risk: null },
    subject: { tool: 'Bash', action: null, resource_ref: null },
    payload_ref: null,
    payload_digest: null,
    redacted_summary: {},
    ...over,
  } as unknown as Envelope;
}

describe('events tail lines', () => {
  it('name the agent and the session', () => {
    expect(formatEvent(7, envelope({}))).toMatch(/agent\.tool\.denied\s+laptop-agent\/sess-42 - Bash$/);
  });

  it('cut a long text at a word and leave out whole pairs that do not fit, never half of one', () => {
    const reason =
      'the command pushes to a protected branch of the production repository without an approved change window';
    const line = formatEvent(
      8,
      envelope({
        redacted_summary: {
          reason_code: 'FORCE_PUSH',
          reason,
          detail: 'x'.repeat(150),
          extra: 'y'.repeat(40),
        },
      }),
    );
    const shown = /reason="([^"]*)"/.exec(line)?.[1];
    expect(shown?.endsWith('…')).toBe(true);
    expect(reason.startsWith(shown!.slice(0, -1))).toBe(true);
    expect(reason[shown!.length - 1]).toBe(' '); // the cut falls where a word ends
    expect(line).toContain('reason_code=FORCE_PUSH');
    expect(line).toMatch(/\(\+1 more: --json\)$/);
  });
});

describe('serve --log-format pretty', () => {
  it('prints a record as one line: time, level, message, fields', async () => {
    const { prettyLine } = await import('./log-format.js');
    expect(
      prettyLine(
        JSON.stringify({
          level: 40,
          time: '2026-12-01T14:03:07.123Z',
          svc: 'switchboard',
          channel: 'phone',
          reason: 'https required',
          msg: 'channel refused',
        }),
      ),
    ).toBe('14:03:07 WARN  channel refused channel=phone reason="https required"');
  });
});
