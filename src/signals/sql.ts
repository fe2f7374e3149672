/** SQL for the signals tables (migration 0450); `$n` placeholders work in both dialects. */

export interface AwayRow {
  owner: string;
  away: number;
  changed_at: number;
  changed_by: string;
  last_input_at: number | null;
}

/** Where a session is, for the stall watch: mid-turn, waiting for a person, or between turns. */
export type Phase = 'working' | 'waiting' | 'idle';

export interface SessionRow {
  session_key: string;
  last_activity_at: number | null;
  idle_open: number;
  idle_folded: number;
  phase: Phase;
  stalled_at: number | null;
  agent: string | null;
  project: string | null;
}

export function getAway(owner: string) {
  return {
    text: 'SELECT owner, away, changed_at, changed_by, last_input_at FROM away_state WHERE owner = $1',
    values: [owner],
  };
}

export function setAway(owner: string, away: boolean, by: string, now: number) {
  return {
    text: `INSERT INTO away_state (owner, away, changed_at, changed_by, last_input_at) VALUES ($1, $2, $3, $4, NULL)
           ON CONFLICT (owner) DO UPDATE SET away = $2, changed_at = $3, changed_by = $4`,
    values: [owner, away ? 1 : 0, now, by],
  };
}

/** A person typed a prompt: the automatic away rule counts quiet time from here. */
export function touchInput(owner: string, now: number) {
  return {
    text: `INSERT INTO away_state (owner, away, changed_at, changed_by, last_input_at) VALUES ($1, 0, $2, '', $2)
           ON CONFLICT (owner) DO UPDATE SET last_input_at = $2`,
    values: [owner, now],
  };
}

export function getSession(key: string) {
  return {
    text: `SELECT session_key, last_activity_at, idle_open, idle_folded, phase, stalled_at, agent, project
             FROM signal_sessions WHERE session_key = $1`,
    values: [key],
  };
}

/** The stored state of a session after an event (`stalled_at` null: activity cleared the stall). */
export interface SessionState {
  last_activity_at: number | null;
  idle_open: boolean;
  idle_folded: number;
  phase: Phase;
  stalled_at: number | null;
  agent: string | null;
  project: string | null;
}

export function saveSession(key: string, s: SessionState, now: number) {
  return {
    text: `INSERT INTO signal_sessions
             (session_key, last_activity_at, idle_open, idle_folded, updated_at, phase, stalled_at, agent, project)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (session_key) DO UPDATE SET last_activity_at = $2, idle_open = $3, idle_folded = $4,
             updated_at = $5, phase = $6, stalled_at = $7, agent = $8, project = $9`,
    values: [
      key,
      s.last_activity_at,
      s.idle_open ? 1 : 0,
      s.idle_folded,
      now,
      s.phase,
      s.stalled_at,
      s.agent,
      s.project,
    ],
  };
}

/** Sessions mid-turn with no activity since `cutoff` and no stall notice out yet, oldest first. */
export function selectStalled(cutoff: number, limit: number) {
  return {
    text: `SELECT session_key, last_activity_at, idle_open, idle_folded, phase, stalled_at, agent, project
             FROM signal_sessions
            WHERE phase = 'working' AND last_activity_at < $1 AND stalled_at IS NULL
            ORDER BY last_activity_at LIMIT $2`,
    values: [cutoff, limit],
  };
}

/** Sessions whose stall notice went out and no activity has cleared since, the newest stall first. */
export function selectStalledNow(limit: number) {
  return {
    text: `SELECT session_key, stalled_at FROM signal_sessions
            WHERE stalled_at IS NOT NULL ORDER BY stalled_at DESC LIMIT $1`,
    values: [limit],
  };
}

/** Claims one stall notice (a second replica's claim finds nothing to update). */
export function markStalled(key: string, cutoff: number, now: number) {
  return {
    text: `UPDATE signal_sessions SET stalled_at = $3
            WHERE session_key = $1 AND phase = 'working' AND last_activity_at < $2 AND stalled_at IS NULL
        RETURNING session_key`,
    values: [key, cutoff, now],
  };
}

/** A permission prompt taken to the phone (migration 0451). */
export function recordPhoneApproval(approvalId: string, sessionKey: string, owner: string, now: number) {
  return {
    text: `INSERT INTO signal_approvals (approval_id, session_key, owner, created_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (approval_id) DO NOTHING`,
    values: [approvalId, sessionKey, owner, now],
  };
}

export interface PhoneApprovalRow {
  approval_id: string;
  session_key: string;
  owner: string;
  created_at: number;
}

export function getPhoneApproval(approvalId: string) {
  return {
    text: 'SELECT approval_id, session_key, owner, created_at FROM signal_approvals WHERE approval_id = $1',
    values: [approvalId],
  };
}

/** The newest phone approval of a session created since `since`, if any. */
export function recentPhoneApproval(sessionKey: string, since: number) {
  return {
    text: `SELECT approval_id, session_key, owner, created_at FROM signal_approvals
           WHERE session_key = $1 AND created_at >= $2 ORDER BY created_at DESC LIMIT 1`,
    values: [sessionKey, since],
  };
}
