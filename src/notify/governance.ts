import type { Severity, Stage } from './port.js';

/**
 * When to speak (seed 000's table) as pure decisions over a task's stored counters. The caller loads
 * the state under a row lock, calls `decide` or `flush`, stores the new state and acts on the outcome,
 * all in one transaction; nothing here reads a clock or a database. Pinned by governance.test.ts.
 */

/** The rate limit counts sends in a sliding minute. */
export const RATE_WINDOW_MS = 60_000;

/** Stages that always reach the owner at once, on the priority lane (retried until delivered). */
export const PRIORITY_STAGES: ReadonlySet<Stage> = new Set(['blocked', 'awaiting_approval', 'failed']);

export interface GovernanceConfig {
  rate_per_minute: number;
  progress_merge_window_seconds: number;
  send_started: boolean;
  /** Repeats of the same `failed`/`blocked` text within this window are folded into one digest; 0/absent: off. */
  flood_window_seconds?: number;
  /** Priority messages per scope per hour; past it they are suppressed (`priority_cap`); 0/absent: no cap. */
  priority_per_hour?: number;
}

/** The cap on priority messages counts sends in a sliding hour. */
export const PRIORITY_WINDOW_MS = 3_600_000;

/** Stages whose identical repeats are a flood (a loop failing the same way), not news. */
const FLOOD_STAGES: ReadonlySet<Stage> = new Set(['failed', 'blocked']);

/**
 * The same `failed`/`blocked` text again within the window: the first was sent, the repeats are
 * counted, and one message says how many there were when the window closes.
 */
export interface Flood {
  stage: Stage;
  fingerprint: string;
  summary: string;
  severity: Severity;
  /** When the first of them was sent. */
  opened_at: number;
  due_at: number;
  /** Repeats folded (the first, already sent, not counted). */
  count: number;
  event_id: string;
  event_ids: string[];
}

export interface Digest {
  opened_at: number;
  due_at: number;
  /** How many reports the digest holds. */
  count: number;
  summary: string;
  detail?: string;
  severity: Severity;
  /** The latest report's event: the digest message is caused by it. */
  event_id: string;
  event_ids: string[];
}

export interface NotifyState {
  /** The previous report, for de-duplication of consecutive identical reports. */
  last?: { stage: Stage; fingerprint: string; at: number };
  /** When each message of the last minute was sent (priority ones included). */
  sent: number[];
  done_sent: boolean;
  /** The turns whose `done` was sent (newest last, at most DONE_TURNS_KEPT): folding is per turn. */
  done_turns?: string[];
  digest?: Digest;
  /** The last priority message sent: a repeat of its text within the flood window opens a flood. */
  last_priority?: { fingerprint: string; at: number };
  flood?: Flood;
  /** Priority sends of the last hour (at most `priority_per_hour`), for the cap. */
  priority_sent?: number[];
}

/**
 * Turn ids remembered per scope. A runtime that reports one turn twice (Codex: a `Stop` hook and a
 * `notify` call) does so within seconds, so the last few turns are enough to fold the second.
 */
export const DONE_TURNS_KEPT = 8;

export const EMPTY_STATE: NotifyState = { sent: [], done_sent: false };

export interface Report {
  stage: Stage;
  severity: Severity;
  summary: string;
  detail?: string;
  /** Same stage and content → same fingerprint (the caller hashes what was reported). */
  fingerprint: string;
  event_id: string;
  /**
   * The runtime turn a `done` ends. With one, each turn's `done` is news once; without one, a scope
   * (a task, a session) sends one `done` until it is resumed.
   */
  turn_id?: string;
}

export type Decision =
  | { status: 'sent'; lane: 'normal' | 'high'; mention: boolean; superseded?: Digest }
  | { status: 'queued'; due_at: number }
  | { status: 'merged'; reason: 'digest' | 'started_not_sent' }
  | { status: 'merged'; reason: 'flood' }
  | { status: 'deduped'; reason: 'same_as_last' | 'done_already_sent' }
  | { status: 'rate_limited'; reason?: 'priority_cap' };

/**
 * The sends that can still count: those of the last minute, and of those only the newest `limit`.
 * The limit is reached exactly when the newest `limit` sends all fall in the window, so older ones
 * change no decision; dropping them keeps the stored state (parsed and written on every report) at
 * most `rate_per_minute` numbers instead of every send of the minute (priority sends and `done` are
 * recorded past the limit).
 */
function recent(sent: number[], now: number, limit: number): number[] {
  if (limit === 0) return [];
  const inWindow = sent.filter((t) => t > now - RATE_WINDOW_MS);
  return inWindow.length > limit ? inWindow.slice(-limit) : inWindow;
}

/** The send just made, appended, keeping the newest `limit` (see `recent`). */
function withSend(sent: number[], now: number, limit: number): number[] {
  if (limit === 0) return [];
  const next = [...sent, now];
  return next.length > limit ? next.slice(-limit) : next;
}

/** The rate limit is reached; `rate_per_minute: 0` turns it off (and keeps no send times). */
function full(sent: number[], cfg: GovernanceConfig): boolean {
  return cfg.rate_per_minute > 0 && sent.length >= cfg.rate_per_minute;
}

function isPriority(r: Report): boolean {
  return PRIORITY_STAGES.has(r.stage) || r.severity === 'critical';
}

/** What to do with one report, and the state after it. */
export function decide(
  state: NotifyState,
  report: Report,
  cfg: GovernanceConfig,
  now: number,
): { decision: Decision; state: NotifyState } {
  const sent = recent(state.sent, now, cfg.rate_per_minute);
  const last = { stage: report.stage, fingerprint: report.fingerprint, at: now };
  const base: NotifyState = { ...state, sent, last };
  const mention = report.severity === 'critical';

  if (isPriority(report)) return decidePriority(state, base, report, cfg, now);
  if (report.stage === 'started' && !cfg.send_started) {
    return { decision: { status: 'merged', reason: 'started_not_sent' }, state: base };
  }
  // Two turns may well end with the same words; a turn reported twice is folded by its id below.
  const perTurn = report.stage === 'done' && report.turn_id !== undefined;
  if (
    !perTurn &&
    state.last &&
    state.last.stage === report.stage &&
    state.last.fingerprint === report.fingerprint
  ) {
    return { decision: { status: 'deduped', reason: 'same_as_last' }, state: base };
  }
  if (report.stage === 'done') {
    const turns = state.done_turns ?? [];
    const repeat = report.turn_id !== undefined ? turns.includes(report.turn_id) : state.done_sent;
    if (repeat) return { decision: { status: 'deduped', reason: 'done_already_sent' }, state: base };
    // `done` is the one message the owner waits for: it is not rate-limited, and it replaces the digest.
    const superseded = state.digest;
    const next: NotifyState = { ...base, sent: withSend(sent, now, cfg.rate_per_minute), done_sent: true };
    if (report.turn_id !== undefined) next.done_turns = [...turns, report.turn_id].slice(-DONE_TURNS_KEPT);
    delete next.digest;
    return {
      decision: { status: 'sent', lane: 'normal', mention, ...(superseded ? { superseded } : {}) },
      state: next,
    };
  }
  if (report.stage === 'progress' && cfg.progress_merge_window_seconds > 0) {
    if (state.digest) {
      const digest: Digest = {
        ...state.digest,
        count: state.digest.count + 1,
        summary: report.summary,
        severity: worse(state.digest.severity, report.severity),
        event_id: report.event_id,
        event_ids: [...state.digest.event_ids, report.event_id],
      };
      if (report.detail !== undefined) digest.detail = report.detail;
      else delete digest.detail;
      return { decision: { status: 'merged', reason: 'digest' }, state: { ...base, digest } };
    }
    const due_at = now + cfg.progress_merge_window_seconds * 1000;
    const digest: Digest = {
      opened_at: now,
      due_at,
      count: 1,
      summary: report.summary,
      severity: report.severity,
      event_id: report.event_id,
      event_ids: [report.event_id],
      ...(report.detail !== undefined ? { detail: report.detail } : {}),
    };
    return { decision: { status: 'queued', due_at }, state: { ...base, digest } };
  }
  if (full(sent, cfg)) return { decision: { status: 'rate_limited' }, state: base };
  return {
    decision: { status: 'sent', lane: 'normal', mention },
    state: { ...base, sent: withSend(sent, now, cfg.rate_per_minute) },
  };
}

/**
 * A priority report: sent at once, except a repeat of the last one's text within the flood window
 * (folded into the flood's digest; the first is never silenced) and a send past the hourly cap.
 */
function decidePriority(
  state: NotifyState,
  base: NotifyState,
  report: Report,
  cfg: GovernanceConfig,
  now: number,
): { decision: Decision; state: NotifyState } {
  const windowMs = (cfg.flood_window_seconds ?? 0) * 1000;
  const flood = state.flood;
  if (windowMs > 0 && FLOOD_STAGES.has(report.stage)) {
    if (flood && flood.fingerprint === report.fingerprint && now < flood.due_at) {
      const next: Flood = {
        ...flood,
        count: flood.count + 1,
        event_id: report.event_id,
        event_ids: [...flood.event_ids, report.event_id],
      };
      return { decision: { status: 'merged', reason: 'flood' }, state: { ...base, flood: next } };
    }
    const last = state.last_priority;
    if (!flood && last && last.fingerprint === report.fingerprint && now < last.at + windowMs) {
      const opened: Flood = {
        stage: report.stage,
        fingerprint: report.fingerprint,
        summary: report.summary,
        severity: report.severity,
        opened_at: last.at,
        due_at: last.at + windowMs,
        count: 1,
        event_id: report.event_id,
        event_ids: [report.event_id],
      };
      return { decision: { status: 'merged', reason: 'flood' }, state: { ...base, flood: opened } };
    }
  }
  const cap = cfg.priority_per_hour ?? 0;
  const hour = recentPriority(state.priority_sent, now, cap);
  if (cap > 0 && hour.length >= cap) {
    return { decision: { status: 'rate_limited', reason: 'priority_cap' }, state: base };
  }
  // A terminal failure makes a pending "still running" digest stale: it is recorded, not sent.
  const superseded = report.stage === 'failed' ? state.digest : undefined;
  const next: NotifyState = {
    ...base,
    sent: withSend(base.sent, now, cfg.rate_per_minute),
    last_priority: { fingerprint: report.fingerprint, at: now },
  };
  if (cap > 0) next.priority_sent = withSend(hour, now, cap);
  if (superseded) delete next.digest;
  return {
    decision: {
      status: 'sent',
      lane: 'high',
      mention: report.severity === 'critical',
      ...(superseded ? { superseded } : {}),
    },
    state: next,
  };
}

/** Priority sends of the last hour that can still count toward the cap (the newest `cap`). */
function recentPriority(sent: number[] | undefined, now: number, cap: number): number[] {
  if (cap === 0 || !sent) return [];
  const inWindow = sent.filter((t) => t > now - PRIORITY_WINDOW_MS);
  return inWindow.length > cap ? inWindow.slice(-cap) : inWindow;
}

/** When the scope next needs the digest worker: its progress digest or its flood, whichever is first. */
export function dueAt(state: NotifyState): number | null {
  const times = [state.digest?.due_at, state.flood?.due_at].filter((t): t is number => t !== undefined);
  return times.length > 0 ? Math.min(...times) : null;
}

export type FlushDecision =
  | { kind: 'none' }
  | { kind: 'send'; digest: Digest }
  /** A flood's window closed: one priority message says how many repeats it folded. */
  | { kind: 'flood'; flood: Flood }
  /** The rate limit is full: the digest waits (and keeps merging) until a slot frees. */
  | { kind: 'postpone'; until: number };

/** Whether the task's digest is due now; the state after sending (or postponing) it. */
export function flush(
  state: NotifyState,
  cfg: GovernanceConfig,
  now: number,
): { decision: FlushDecision; state: NotifyState } {
  if (state.flood && state.flood.due_at <= now) {
    const next: NotifyState = { ...state, sent: withSend(state.sent, now, cfg.rate_per_minute) };
    delete next.flood;
    return { decision: { kind: 'flood', flood: state.flood }, state: next };
  }
  const digest = state.digest;
  if (!digest || digest.due_at > now) return { decision: { kind: 'none' }, state };
  const sent = recent(state.sent, now, cfg.rate_per_minute);
  if (full(sent, cfg)) {
    // The oldest of the newest `rate_per_minute` sends: when it leaves the window, a slot is free.
    const until = Math.min(...sent) + RATE_WINDOW_MS;
    return {
      decision: { kind: 'postpone', until },
      state: { ...state, sent, digest: { ...digest, due_at: until } },
    };
  }
  const next: NotifyState = { ...state, sent: withSend(sent, now, cfg.rate_per_minute) };
  delete next.digest;
  return { decision: { kind: 'send', digest }, state: next };
}

const RANK: Record<Severity, number> = { info: 0, warn: 1, critical: 2 };

function worse(a: Severity, b: Severity): Severity {
  return RANK[b] > RANK[a] ? b : a;
}
