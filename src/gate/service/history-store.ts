import type { Db } from '../../store/port.js';
import { HISTORY_LIMIT, HistoryWindow } from '../history.js';
import * as q from '../sql.js';
import type { DecisionKind, HistoryEntry } from '../types.js';

/** Sessions whose history stays in memory; the least recently used one is dropped (and read again). */
const CACHED_SESSIONS = 10_000;
/** Rows a key may gather past the limit before the extra ones are deleted: trims come in batches. */
const TRIM_SLACK = 50;

/** A session's (or task's) history as the gate holds it. */
export interface SessionHistory {
  /** Oldest first, at most HISTORY_LIMIT, with its counts; CEL reads these very objects. */
  window: HistoryWindow;
  /** When the session first took outside content in (ms), or null. */
  untrustedSince: number | null;
  /** Rows this key has in the table as far as this process knows. */
  stored: number;
}

interface HistoryRow {
  at: number | string;
  kind: string;
  tool: string;
  decision: DecisionKind;
  untrusted: number | boolean;
  paths: string;
  host: string;
}

/**
 * CEL's `history` and `session.untrusted`: kept in memory per session, so a decision reads them
 * without I/O once the session is known, and in the gate's tables (`gate_history`,
 * `gate_untrusted_sessions`) inside each decision's transaction, so a restart keeps them. Memory is
 * changed only after the commit: a rolled-back decision leaves no entry.
 */
export class HistoryStore {
  private readonly cache = new Map<string, SessionHistory>();

  constructor(private readonly db: Db) {}

  /** The session's history; read from the table the first time this process sees the key. */
  async get(key: string): Promise<SessionHistory> {
    const cached = this.cache.get(key);
    if (cached) {
      // Map order is insertion order: re-inserting keeps the most recently used last.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const loaded = await this.read(key, Number.MAX_SAFE_INTEGER);
    const state: SessionHistory = {
      window: new HistoryWindow(loaded.entries),
      untrustedSince: loaded.untrustedSince,
      stored: loaded.entries.length,
    };
    // Two decisions may load the same key at once: the first one stored wins, so appends are not lost.
    const raced = this.cache.get(key);
    if (raced) return raced;
    this.cache.set(key, state);
    if (this.cache.size > CACHED_SESSIONS) this.cache.delete(this.cache.keys().next().value!);
    return state;
  }

  /** What the key held before `before` (ms): the shadow run's starting point. Reads the table only. */
  async read(
    key: string,
    before: number,
  ): Promise<{ entries: HistoryEntry[]; untrustedSince: number | null }> {
    const rows = await this.db.query<HistoryRow>(q.selectHistory(key, before, HISTORY_LIMIT));
    const [mark] = await this.db.query<{ since: number | string }>(q.selectUntrustedSession(key));
    const since = mark ? Number(mark.since) : null;
    return {
      entries: rows.reverse().map(entryOf),
      untrustedSince: since !== null && since < before ? since : null,
    };
  }

  /**
   * Records a decided intent inside the decision's transaction `tx`; memory follows after the commit.
   * An untrusted entry marks the session untrusted for good.
   */
  async append(tx: Db, key: string, eventId: string, entry: HistoryEntry): Promise<void> {
    const state = await this.get(key);
    const at = Date.parse(entry.at);
    await tx.query(
      q.insertHistory({
        eventId,
        key,
        at,
        kind: entry.kind,
        tool: entry.tool,
        decision: entry.decision,
        untrusted: entry.untrusted,
        paths: JSON.stringify(entry.paths),
        host: entry.host,
      }),
    );
    if (entry.untrusted && state.untrustedSince === null) {
      await tx.query(q.insertUntrustedSession(key, at, entry.kind));
    }
    const trim = state.stored + 1 > HISTORY_LIMIT + TRIM_SLACK;
    if (trim) await tx.query(q.trimHistory(key, HISTORY_LIMIT));
    tx.afterCommit(() => {
      state.window.push(entry);
      state.stored = trim ? HISTORY_LIMIT : state.stored + 1;
      if (entry.untrusted && state.untrustedSince === null) state.untrustedSince = at;
    });
  }

  /** Marks a session untrusted without an intent (an A2A message, a webhook payload it was handed). */
  async markUntrusted(key: string, at: number, source: string): Promise<void> {
    const state = await this.get(key);
    if (state.untrustedSince !== null) return;
    await this.db.query(q.insertUntrustedSession(key, at, source));
    state.untrustedSince ??= at;
  }
}

function entryOf(r: HistoryRow): HistoryEntry {
  let paths: string[] = [];
  try {
    const parsed: unknown = JSON.parse(r.paths);
    if (Array.isArray(parsed)) paths = parsed.filter((p): p is string => typeof p === 'string');
  } catch {
    // A row written by hand; its paths are simply unknown.
  }
  return {
    kind: r.kind,
    tool: r.tool,
    decision: r.decision,
    at: new Date(Number(r.at)).toISOString(),
    untrusted: r.untrusted === true || Number(r.untrusted) === 1,
    paths,
    host: r.host,
  };
}
