import { hostOf } from './args.js';
import { type HistoryTable, type HistoryView, WindowIndex } from './history-index.js';
import type { DecisionKind, HistoryEntry, Intent } from './types.js';

/** CEL's `history` holds at most this many entries: the session's newest intents, newest last. */
export const HISTORY_LIMIT = 200;

/** Kinds whose result is content from outside (a web page, search results): the session read it. */
const OUTSIDE_KINDS = new Set(['web.fetch', 'web.search']);

/**
 * Whose history an intent belongs to: its session, else its task; undefined when it names neither (an
 * API call without a session has no history). Not the agent: a session's subagents (Claude Code's
 * `agent_id`) act in the same session, and what one of them read is in the session either way.
 */
export function historyKey(
  sessionId: string | null | undefined,
  taskId: string | null | undefined,
): string | undefined {
  if (sessionId) return `s:${sessionId}`;
  if (taskId) return `t:${taskId}`;
  return undefined;
}

/**
 * Whether the intent brought outside content into the session: a web fetch or search that was not
 * denied (a require_approval may still run once approved), or an intent its caller marked untrusted
 * (a reach tool declared `untrusted: true`, an A2A message).
 */
export function bringsOutsideContent(intent: Intent, decision: DecisionKind): boolean {
  if (decision === 'deny') return false;
  return intent.untrusted === true || OUTSIDE_KINDS.has(intent.kind ?? 'other');
}

/** The entry CEL's `history` shows for a decided intent: only strings, bools and lists of strings. */
export function historyEntry(intent: Intent, decision: DecisionKind, at: Date): HistoryEntry {
  const args = intent.args ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const paths = Array.isArray(args.paths)
    ? args.paths.filter((p): p is string => typeof p === 'string')
    : text(args.path) !== ''
      ? [text(args.path)]
      : [];
  const url = text(args.url) || (Array.isArray(args.urls) ? text(args.urls[0]) : '');
  return {
    kind: intent.kind ?? 'other',
    tool: intent.tool,
    decision,
    at: at.toISOString(),
    untrusted: bringsOutsideContent(intent, decision),
    paths,
    host: hostOf(url),
  };
}

/** A window's counts by kind, host or file name: CEL reads `"web.fetch" in session.kinds` in O(1). */
export type HistoryCounts = Map<string, bigint>;

/**
 * A session's last HISTORY_LIMIT entries, oldest first, with counts over exactly those entries by
 * kind, by host reached and by file name (the last part of each path), kept as entries come and go.
 * `history.exists(h, …)` walks the list; `session.kinds`, `session.hosts` and `session.files` answer
 * the common questions ("fetched anything?", "read a .env?", "been to this host?") without a walk.
 */
export class HistoryWindow {
  readonly entries: HistoryEntry[] = [];
  readonly kinds: HistoryCounts = new Map();
  readonly hosts: HistoryCounts = new Map();
  readonly files: HistoryCounts = new Map();
  /** Entries ever pushed: the indexes know which of theirs left by it. */
  private pushed = 0;
  /** One index per compiled policy that asked (history-index.ts); a replaced policy's goes with it. */
  private readonly indexes = new WeakMap<HistoryTable, WindowIndex>();

  constructor(entries: readonly HistoryEntry[] = []) {
    for (const e of entries.slice(-HISTORY_LIMIT)) this.push(e);
  }

  push(entry: HistoryEntry): void {
    this.entries.push(entry);
    this.pushed++;
    this.count(entry, 1n);
    if (this.entries.length > HISTORY_LIMIT) this.count(this.entries.shift()!, -1n);
  }

  /** The policy's `history.exists` answers over this window, brought up to date; undefined when it asks none. */
  index(table: HistoryTable): HistoryView | undefined {
    if (table.predicates.length === 0) return undefined;
    let index = this.indexes.get(table);
    if (!index) {
      index = new WindowIndex(table, HISTORY_LIMIT);
      this.indexes.set(table, index);
    }
    return index.sync(this.entries, this.pushed);
  }

  private count(e: HistoryEntry, by: bigint): void {
    bump(this.kinds, e.kind, by);
    if (e.host !== '') bump(this.hosts, e.host, by);
    for (const p of new Set(e.paths.map(fileName))) if (p !== '') bump(this.files, p, by);
  }
}

function bump(counts: HistoryCounts, key: string, by: bigint): void {
  const n = (counts.get(key) ?? 0n) + by;
  if (n > 0n) counts.set(key, n);
  else counts.delete(key);
}

function fileName(path: string): string {
  const trimmed = path.replace(/[/\\]+$/, '');
  return trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\')) + 1);
}
