import { describe, expect, it } from 'vitest';
import { buildEnvelope, type Envelope, type EnvelopeInput } from '../envelope/index.js';
import type { DeliveryView } from '../delivery/port.js';
import { groupDead } from './pages/deliveries.js';
import { summarize } from './pages/sessions.js';
import { ago, idLabel, tabTitle } from './shell.js';
import { arrange, MAX_DEPTH, summaryLine } from './timeline.js';

const DEFAULTS = { tenant_id: 't', environment: 'test' };
const env = (input: EnvelopeInput, at = '2026-01-01T00:00:00.000Z'): Envelope =>
  buildEnvelope({ occurred_at: at, ...input }, DEFAULTS);

describe('the timeline', () => {
  it('keeps log order, each event once, indented one step under a cause on the timeline', () => {
    const root = env({ type: 'agent.tool.requested' });
    const decided = env({ type: 'agent.tool.deferred', causation_id: root.event_id });
    const asked = env({ type: 'agent.approval.requested', causation_id: root.event_id });
    const told = env({ type: 'agent.notification.sent', causation_id: asked.event_id });
    const orphan = env({ type: 'agent.task.resumed', causation_id: 'evt_elsewhere' });
    const rows = arrange([
      { seq: 4, envelope: told },
      { seq: 1, envelope: root },
      { seq: 3, envelope: decided },
      { seq: 2, envelope: asked },
      { seq: 1, envelope: root },
      { seq: 5, envelope: orphan },
    ]);
    expect(rows.map((r) => [r.seq, r.depth])).toEqual([
      [1, 0],
      [2, 1],
      [3, 1],
      [4, 2],
      [5, 0],
    ]);
  });

  it('stops indenting at the deepest level it draws', () => {
    let cause = env({ type: 'agent.tool.requested' });
    const events = [{ seq: 1, envelope: cause }];
    for (let i = 2; i < 15; i++) {
      cause = env({ type: 'agent.tool.requested', causation_id: cause.event_id });
      events.push({ seq: i, envelope: cause });
    }
    expect(Math.max(...arrange(events).map((r) => r.depth))).toBe(MAX_DEPTH);
  });

  it('says an event in one line: subject, then a few summary fields, the action once', () => {
    const e = env({
      type: 'agent.approval.requested',
      subject: { tool: 'Bash', action: 'deploy' },
      redacted_summary: { action: 'deploy', reason: 'x'.repeat(200), nested: { a: 1 }, approval_id: 'apr_1' },
    });
    const line = summaryLine(e);
    expect(line.startsWith('Bash · action=deploy · reason=')).toBe(true);
    expect(line).toContain('…');
    expect(line).not.toContain('nested');
  });
});

describe('sessions from the log', () => {
  it('groups by session, newest first, and flags quiet, unended ones as stalled', () => {
    const now = Date.parse('2026-01-01T01:00:00.000Z');
    const events = [
      env(
        { type: 'agent.session.started', execution: { session_id: 'a' }, runtime: { kind: 'codex' } },
        '2026-01-01T00:00:00.000Z',
      ),
      env(
        {
          type: 'agent.approval.requested',
          execution: { session_id: 'a' },
          redacted_summary: { approval_id: 'apr_1' },
        },
        '2026-01-01T00:01:00.000Z',
      ),
      env({ type: 'agent.session.started', execution: { session_id: 'b' } }, '2026-01-01T00:58:00.000Z'),
      env({ type: 'agent.session.ended', execution: { session_id: 'c' } }, '2026-01-01T00:10:00.000Z'),
      env({ type: 'agent.progress.reported' }, '2026-01-01T00:59:00.000Z'),
    ];
    const s = summarize(events, now, 600_000);
    expect(s.map((x) => [x.id, x.stalled, x.ended, x.waiting])).toEqual([
      ['b', false, false, 0],
      ['c', false, true, 0],
      ['a', true, false, 1],
    ]);
    expect(s[2]!.runtime).toBe('codex');
  });
});

describe('the dead letter groups', () => {
  const dead = (
    id: string,
    destination: string,
    error: string | null,
    status: number | null,
  ): DeliveryView => ({
    id,
    event_id: 'evt',
    correlation_id: 'evt',
    destination,
    channel_type: 'webhook',
    status: 'dead',
    attempts: 3,
    next_attempt_at: '2026-01-01T00:00:00.000Z',
    last_status: status,
    last_error: error,
    last_response: null,
    payload_ref: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: `2026-01-01T00:0${id.length % 10}:00.000Z`,
  });

  it('groups by destination and the start of the error, the biggest group first', () => {
    const groups = groupDead([
      dead('a', 'hook', 'rejected with 404', 404),
      dead('bb', 'hook', 'rejected with 404', 404),
      dead('c', 'phone', null, 500),
      dead('ddd', 'hook', 'timed out', null),
    ]);
    expect(groups.map((g) => [g.destination, g.error, g.ids])).toEqual([
      ['hook', 'rejected with 404', ['a', 'bb']],
      ['hook', 'timed out', ['ddd']],
      ['phone', 'HTTP 500', ['c']],
    ]);
  });
});

describe('the shell', () => {
  it('leads the tab title with the pending count', () => {
    expect(tabTitle('Tasks', 3)).toBe('(3) Tasks · Switchboard');
    expect(tabTitle('Tasks', 0)).toBe('Tasks · Switchboard');
  });

  it('shows an id by its prefix and tail, where ids of one millisecond differ', () => {
    expect(idLabel('dlv_01M8RHPY0HABCDEFGH12345678')).toBe('dlv_…12345678');
    expect(idLabel('tsk_short')).toBe('tsk_short');
  });

  it('says how long ago, or how long until', () => {
    expect(ago(42_000)).toBe('42s ago');
    expect(ago(-3 * 3600_000)).toBe('in 3h 0m');
  });
});
