import { describe, expect, it } from 'vitest';
import {
  DONE_TURNS_KEPT,
  type Decision,
  decide,
  dueAt,
  EMPTY_STATE,
  flush,
  type GovernanceConfig,
  type NotifyState,
  type Report,
} from './governance.js';

const CFG: GovernanceConfig = { rate_per_minute: 6, progress_merge_window_seconds: 30, send_started: false };
const T0 = 1_800_000_000_000;

let n = 0;
function report(stage: Report['stage'], summary: string, severity: Report['severity'] = 'info'): Report {
  n += 1;
  return { stage, severity, summary, fingerprint: `${stage}|${summary}`, event_id: `evt_${n}` };
}

/** Feeds reports one per `everyMs`, flushing due digests between them, and collects what happened. */
function run(reports: Report[], cfg = CFG, everyMs = 3000) {
  let state: NotifyState = EMPTY_STATE;
  const decisions: Decision[] = [];
  let digestsSent = 0;
  reports.forEach((r, i) => {
    const now = T0 + i * everyMs;
    const f = flush(state, cfg, now);
    state = f.state;
    if (f.decision.kind === 'send') digestsSent++;
    const d = decide(state, r, cfg, now);
    state = d.state;
    decisions.push(d.decision);
  });
  return { decisions, digestsSent, state };
}

const count = (ds: Decision[], s: Decision['status']) => ds.filter((d) => d.status === s).length;

describe('when to speak', () => {
  it('does not send "started" by default, and records it as merged', () => {
    const { decision } = decide(EMPTY_STATE, report('started', 'go'), CFG, T0);
    expect(decision).toEqual({ status: 'merged', reason: 'started_not_sent' });
  });

  it('sends "started" when the config asks for it', () => {
    const { decision } = decide(EMPTY_STATE, report('started', 'go'), { ...CFG, send_started: true }, T0);
    expect(decision.status).toBe('sent');
  });

  it('folds twenty "still running" reports in a minute into at most six messages, each of the rest merged', () => {
    const reports = Array.from({ length: 20 }, (_, i) => report('progress', `still running (${i})`));
    const { decisions, digestsSent } = run(reports);
    expect(count(decisions, 'sent') + digestsSent).toBeLessThanOrEqual(6);
    expect(count(decisions, 'queued') + count(decisions, 'merged')).toBe(20);
    expect(digestsSent).toBeGreaterThanOrEqual(1);
  });

  it('rate-limits twenty immediate reports to six a minute when merging is off', () => {
    const reports = Array.from({ length: 20 }, (_, i) => report('progress', `still running (${i})`));
    const { decisions } = run(reports, { ...CFG, progress_merge_window_seconds: 0 });
    expect(count(decisions, 'sent')).toBe(6);
    expect(count(decisions, 'rate_limited')).toBe(14);
  });

  it('lets a slot free again once the minute has passed', () => {
    const reports = Array.from({ length: 8 }, (_, i) => report('progress', `r${i}`));
    const { decisions } = run(reports, { ...CFG, progress_merge_window_seconds: 0 }, 10_000);
    // sends at 0..50 s fill the minute; at 60 s the first send has left the window
    expect(decisions.map((d) => d.status)).toEqual([
      'sent',
      'sent',
      'sent',
      'sent',
      'sent',
      'sent',
      'sent',
      'sent',
    ]);
  });

  it('de-duplicates consecutive identical reports of the same stage', () => {
    const { decisions } = run([
      report('progress', 'still running'),
      report('progress', 'still running'),
      report('progress', 'still running'),
    ]);
    expect(decisions.map((d) => d.status)).toEqual(['queued', 'deduped', 'deduped']);
  });

  it('does not de-duplicate the same text under another stage', () => {
    const { decisions } = run([report('progress', 'x'), report('blocked', 'x')]);
    expect(decisions[1]?.status).toBe('sent');
  });

  it.each(['blocked', 'awaiting_approval', 'failed'] as const)(
    'always sends "%s" on the priority lane, even over the rate limit',
    (stage) => {
      const flood = Array.from({ length: 6 }, (_, i) => report('progress', `p${i}`));
      const { state } = run(flood, { ...CFG, progress_merge_window_seconds: 0 }, 1);
      const { decision } = decide(state, report(stage, 'needs you'), CFG, T0 + 10);
      expect(decision).toMatchObject({ status: 'sent', lane: 'high', mention: false });
    },
  );

  it('sends "failed" on the priority lane and drops a pending digest as superseded', () => {
    const a = decide(EMPTY_STATE, report('progress', 'compiling'), CFG, T0);
    const b = decide(a.state, report('failed', 'compile error'), CFG, T0 + 1000);
    expect(b.decision).toMatchObject({ status: 'sent', lane: 'high' });
    expect(b.decision.status === 'sent' && b.decision.superseded?.count).toBe(1);
    expect(b.state.digest).toBeUndefined();
  });

  it('mentions the owner for critical only', () => {
    const crit = decide(EMPTY_STATE, report('progress', 'disk full', 'critical'), CFG, T0);
    expect(crit.decision).toMatchObject({ status: 'sent', lane: 'high', mention: true });
    for (const sev of ['info', 'warn'] as const) {
      const d = decide(EMPTY_STATE, report('blocked', `b ${sev}`, sev), CFG, T0).decision;
      expect(d.status === 'sent' && d.mention).toBe(false);
    }
  });

  it('sends "done" once, not rate-limited, and replaces the digest', () => {
    const full = run(
      Array.from({ length: 6 }, (_, i) => report('progress', `p${i}`)),
      { ...CFG, progress_merge_window_seconds: 0 },
      1,
    );
    const first = decide(full.state, report('done', 'merged PR'), CFG, T0 + 10);
    expect(first.decision).toMatchObject({ status: 'sent', lane: 'normal' });
    const second = decide(first.state, report('done', 'merged PR again'), CFG, T0 + 20);
    expect(second.decision).toEqual({ status: 'deduped', reason: 'done_already_sent' });
  });

  it('sends one "done" per turn when reports name their turn, and folds a turn reported twice', () => {
    const turn = (id: string, summary = 'Turn finished') => ({ ...report('done', summary), turn_id: id });
    const t1 = decide(EMPTY_STATE, turn('t1'), CFG, T0);
    expect(t1.decision).toMatchObject({ status: 'sent', lane: 'normal' });
    const again = decide(t1.state, turn('t1', 'Turn finished (notify)'), CFG, T0 + 1000);
    expect(again.decision).toEqual({ status: 'deduped', reason: 'done_already_sent' });
    const t2 = decide(again.state, turn('t2'), CFG, T0 + 60_000);
    expect(t2.decision).toMatchObject({ status: 'sent', lane: 'normal' });
    let state = t2.state;
    for (let i = 3; i < 30; i++) state = decide(state, turn(`t${i}`), CFG, T0 + i * 60_000).state;
    expect(state.done_turns).toHaveLength(DONE_TURNS_KEPT);
  });
});

describe('progress digests', () => {
  it('opens a digest, merges into it, and flushes one message when the window closes', () => {
    const a = decide(EMPTY_STATE, report('progress', 'step 1'), CFG, T0);
    expect(a.decision).toEqual({ status: 'queued', due_at: T0 + 30_000 });
    const b = decide(a.state, report('progress', 'step 2', 'warn'), CFG, T0 + 5000);
    expect(b.decision).toEqual({ status: 'merged', reason: 'digest' });
    expect(flush(b.state, CFG, T0 + 29_999).decision.kind).toBe('none');
    const f = flush(b.state, CFG, T0 + 30_000);
    expect(f.decision.kind).toBe('send');
    if (f.decision.kind === 'send') {
      expect(f.decision.digest).toMatchObject({ count: 2, summary: 'step 2', severity: 'warn' });
      expect(f.decision.digest.event_ids).toHaveLength(2);
    }
    expect(f.state.digest).toBeUndefined();
    expect(f.state.sent).toEqual([T0 + 30_000]);
  });

  it('postpones a due digest while the rate limit is full, and sends it when a slot frees', () => {
    let state: NotifyState = { sent: Array.from({ length: 6 }, (_, i) => T0 + i), done_sent: false };
    state = decide(state, report('progress', 'waiting'), CFG, T0 + 100).state;
    const p = flush(state, CFG, T0 + 30_100);
    expect(p.decision).toEqual({ kind: 'postpone', until: T0 + 60_000 });
    expect(flush(p.state, CFG, T0 + 60_000).decision.kind).toBe('send');
  });

  it('keeps at most rate_per_minute sends in the state, and still limits by the newest of them', () => {
    // Priority reports are sent past the limit; only the newest six can still decide anything.
    let state: NotifyState = EMPTY_STATE;
    for (let i = 0; i < 20; i++) state = decide(state, report('failed', `f${i}`), CFG, T0 + i * 1000).state;
    expect(state.sent).toEqual(Array.from({ length: 6 }, (_, i) => T0 + (14 + i) * 1000));
    // A minute after the 14th send five of the six are still in the window: a progress report waits…
    const progress = { ...CFG, progress_merge_window_seconds: 0 };
    expect(decide(state, report('progress', 'p1'), progress, T0 + 73_999).decision.status).toBe(
      'rate_limited',
    );
    // …and a due digest is postponed exactly until the oldest of those six leaves it.
    const digest = decide(state, report('progress', 'p2'), CFG, T0 + 40_000).state;
    expect(flush(digest, CFG, T0 + 70_000).decision).toEqual({ kind: 'postpone', until: T0 + 74_000 });
    expect(decide(state, report('progress', 'p3'), progress, T0 + 74_000).decision.status).toBe('sent');
  });

  it('rate_per_minute: 0 turns the limit off and keeps no send times', () => {
    const off = { ...CFG, rate_per_minute: 0, progress_merge_window_seconds: 0 };
    let state: NotifyState = EMPTY_STATE;
    for (let i = 0; i < 50; i++) {
      const r = decide(state, report('progress', `p${i}`), off, T0 + i);
      expect(r.decision.status).toBe('sent');
      state = r.state;
    }
    expect(state.sent).toEqual([]);
  });
});

describe('floods of priority stages', () => {
  const FLOOD: GovernanceConfig = { ...CFG, flood_window_seconds: 600, priority_per_hour: 30 };
  const same = (stage: Report['stage'] = 'failed') => ({
    ...report(stage, 'tests failed'),
    fingerprint: 'same',
  });

  it('sends the first, folds the repeats, and sends one digest with the count when the window closes', () => {
    let r = decide(EMPTY_STATE, same(), FLOOD, T0);
    expect(r.decision).toMatchObject({ status: 'sent', lane: 'high' });
    for (let i = 1; i < 14; i++) {
      r = decide(r.state, same(), FLOOD, T0 + i * 30_000);
      expect(r.decision).toEqual({ status: 'merged', reason: 'flood' });
    }
    expect(dueAt(r.state)).toBe(T0 + 600_000);
    expect(flush(r.state, FLOOD, T0 + 599_999).decision.kind).toBe('none');
    const f = flush(r.state, FLOOD, T0 + 600_000);
    expect(f.decision.kind).toBe('flood');
    if (f.decision.kind === 'flood') expect(f.decision.flood).toMatchObject({ count: 13, stage: 'failed' });
    expect(f.state.flood).toBeUndefined();
    // After the digest, the next repeat is news again: sent, and a new flood may follow.
    expect(decide(f.state, same(), FLOOD, T0 + 601_000).decision).toMatchObject({ status: 'sent' });
  });

  it('sends a different text at once while a flood is open', () => {
    let r = decide(EMPTY_STATE, same(), FLOOD, T0);
    r = decide(r.state, same(), FLOOD, T0 + 1000);
    const other = decide(r.state, report('blocked', 'needs a password'), FLOOD, T0 + 2000);
    expect(other.decision).toMatchObject({ status: 'sent', lane: 'high' });
    expect(decide(other.state, same(), FLOOD, T0 + 3000).decision).toEqual({
      status: 'merged',
      reason: 'flood',
    });
  });

  it('caps priority messages per hour, and frees a slot when the oldest leaves the hour', () => {
    const capped: GovernanceConfig = { ...FLOOD, priority_per_hour: 3 };
    let state: NotifyState = EMPTY_STATE;
    for (let i = 0; i < 3; i++) {
      const r = decide(state, report('failed', `f${i}`), capped, T0 + i * 1000);
      expect(r.decision.status).toBe('sent');
      state = r.state;
    }
    const over = decide(state, report('failed', 'f3'), capped, T0 + 10_000);
    expect(over.decision).toEqual({ status: 'rate_limited', reason: 'priority_cap' });
    expect(decide(over.state, report('failed', 'f4'), capped, T0 + 3_600_001).decision.status).toBe('sent');
  });

  it('folds nothing with flood_window_seconds 0 and caps nothing with priority_per_hour 0', () => {
    const off: GovernanceConfig = { ...CFG, flood_window_seconds: 0, priority_per_hour: 0 };
    let state: NotifyState = EMPTY_STATE;
    for (let i = 0; i < 50; i++) {
      const r = decide(state, same(), off, T0 + i);
      expect(r.decision.status).toBe('sent');
      state = r.state;
    }
  });
});
