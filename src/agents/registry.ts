import type { AgentCard } from '@a2a-js/sdk';
import type { ReadCard } from './card.js';
import { isUp, type Routable } from './route.js';
import type { AgentRow, AgentStateRow } from './sql.js';

/**
 * The registry in memory: every known agent with its card, liveness and routing statistics, and an
 * index from skill to agents, so a routing decision reads no table (bench `agents`). The store holds
 * the same rows (sql.ts); a heartbeat or a finished attempt writes both.
 */

/** Each new outcome moves the EWMAs a fifth of the way: about the last ten calls count. */
export const EWMA_ALPHA = 0.2;
/** Latencies kept per agent for the listed p50. */
const LATENCY_WINDOW = 64;

export type AgentSource = 'config' | 'api';

export interface AgentRecord extends Routable {
  name: string;
  skillList: string[];
  endpoint: string;
  card: AgentCard;
  cardJson: Record<string, unknown>;
  cardUrl: string | null;
  source: AgentSource;
  /** The bearer token Switchboard sends it (config agents' `token_env`); never listed or logged. */
  token: string | undefined;
  /** The variable the token is read from (a config agent's `token_env`; stored, the token never is). */
  tokenEnv: string | null;
  /** What its last heartbeat said; `load` adds the calls open to it. */
  reportedLoad: number;
  open: number;
  latencies: number[];
  registeredBy: string;
  /** The stored card's version this record was built from (sync.ts re-reads a card that moved). */
  cardVersion: number;
}

/** GET /v1/agents, one entry. */
export interface AgentListing {
  id: string;
  name: string;
  skills: string[];
  status: 'up' | 'down';
  load: number;
  success_rate: number;
  latency_ms_p50: number | null;
  last_seen: string | null;
  source: AgentSource;
  weight: number;
}

export class Registry {
  private readonly agents = new Map<string, AgentRecord>();
  private bySkill = new Map<string, AgentRecord[]>();

  get(id: string): AgentRecord | undefined {
    return this.agents.get(id);
  }

  has(id: string): boolean {
    return this.agents.has(id);
  }

  all(): AgentRecord[] {
    return [...this.agents.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  withSkill(skill: string): readonly AgentRecord[] {
    return this.bySkill.get(skill) ?? [];
  }

  skills(): string[] {
    return [...this.bySkill.keys()].sort();
  }

  /** Adds or replaces an agent (a new card keeps the statistics of the old one). */
  put(
    id: string,
    read: ReadCard,
    o: {
      source: AgentSource;
      cardUrl: string | null;
      weight: number;
      token: string | undefined;
      tokenEnv?: string | null;
      registeredBy: string;
      row?: AgentRow;
      lastSeen: number | null;
      cardVersion?: number;
    },
  ): AgentRecord {
    const before = this.agents.get(id);
    const row = o.row;
    const rec: AgentRecord = {
      id,
      name: read.name,
      skills: new Set(read.skills),
      skillList: read.skills,
      endpoint: read.endpoint,
      card: read.card,
      cardJson: read.json,
      cardUrl: o.cardUrl,
      source: o.source,
      token: o.token,
      tokenEnv: o.tokenEnv ?? null,
      weight: o.weight,
      status: before?.status ?? (row?.status === 'down' ? 'down' : 'up'),
      reportedLoad: before?.reportedLoad ?? Number(row?.load ?? 0),
      open: before?.open ?? 0,
      load: 0,
      successEwma: before?.successEwma ?? Number(row?.success_ewma ?? 1),
      latencyEwma: before?.latencyEwma ?? (row?.latency_ewma == null ? null : Number(row.latency_ewma)),
      lastSeen: maxOf(
        before?.lastSeen ?? null,
        row?.last_seen == null ? null : Number(row.last_seen),
        o.lastSeen,
      ),
      latencies: before?.latencies ?? [],
      registeredBy: o.registeredBy,
      cardVersion: o.cardVersion ?? Number(row?.card_version ?? before?.cardVersion ?? 0),
    };
    rec.load = rec.reportedLoad + rec.open;
    this.agents.set(id, rec);
    this.reindex();
    return rec;
  }

  private reindex(): void {
    const index = new Map<string, AgentRecord[]>();
    for (const a of this.all())
      for (const s of a.skillList) {
        const list = index.get(s) ?? [];
        index.set(s, list);
        list.push(a);
      }
    this.bySkill = index;
  }

  heartbeat(a: AgentRecord, now: number, load: number | undefined, status: 'up' | 'down' | undefined): void {
    if (load !== undefined) a.reportedLoad = load;
    if (status !== undefined) a.status = status;
    a.lastSeen = now;
    a.load = a.reportedLoad + a.open;
  }

  /**
   * The shared state as the store holds it (every replica's heartbeats and outcomes, and the calls
   * open to the agent from all of them): it replaces this replica's copy. A heartbeat heard here after
   * the read keeps its later `last_seen`. `keepOpen` (SQLite, one gateway): this process's count of
   * open calls is the whole of it, and a job done by its first look never had a row to count.
   */
  applyState(a: AgentRecord, row: AgentStateRow, keepOpen = false): void {
    a.status = row.status === 'down' ? 'down' : 'up';
    a.reportedLoad = Number(row.load);
    if (!keepOpen) a.open = Number(row.open);
    a.load = a.reportedLoad + a.open;
    a.weight = Number(row.weight);
    a.successEwma = Number(row.success_ewma);
    a.latencyEwma = row.latency_ewma == null ? null : Number(row.latency_ewma);
    const seen = row.last_seen == null ? null : Number(row.last_seen);
    a.lastSeen = maxOf(a.lastSeen, seen);
  }

  /** An attempt's outcome as the store computed it (both replicas' outcomes counted). */
  applyOutcome(
    a: AgentRecord,
    row: { success_ewma: number; latency_ewma: number | null; last_seen: number | string | null },
  ): void {
    a.successEwma = Number(row.success_ewma);
    a.latencyEwma = row.latency_ewma == null ? null : Number(row.latency_ewma);
    a.lastSeen = maxOf(a.lastSeen, row.last_seen == null ? null : Number(row.last_seen));
  }

  opened(a: AgentRecord): void {
    a.open += 1;
    a.load = a.reportedLoad + a.open;
  }

  /** One attempt ended: the EWMAs move; an answer (even a failed task) is a sign of life. */
  closed(a: AgentRecord, now: number, outcome: { ok: boolean; answered: boolean; latencyMs: number }): void {
    a.open = Math.max(0, a.open - 1);
    a.load = a.reportedLoad + a.open;
    a.successEwma += EWMA_ALPHA * ((outcome.ok ? 1 : 0) - a.successEwma);
    if (outcome.answered) {
      a.latencyEwma =
        a.latencyEwma === null
          ? outcome.latencyMs
          : a.latencyEwma + EWMA_ALPHA * (outcome.latencyMs - a.latencyEwma);
      a.latencies.push(outcome.latencyMs);
      if (a.latencies.length > LATENCY_WINDOW) a.latencies.shift();
      a.lastSeen = now;
    }
  }

  listing(a: AgentRecord, now: number, ttlMs: number): AgentListing {
    return {
      id: a.id,
      name: a.name,
      skills: a.skillList,
      status: isUp(a, now, ttlMs) ? 'up' : 'down',
      load: a.load,
      success_rate: Math.round(a.successEwma * 1000) / 1000,
      latency_ms_p50: median(a.latencies),
      last_seen: a.lastSeen === null ? null : new Date(a.lastSeen).toISOString(),
      source: a.source,
      weight: a.weight,
    };
  }
}

function maxOf(...xs: (number | null)[]): number | null {
  const present = xs.filter((x): x is number => x !== null);
  return present.length ? Math.max(...present) : null;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return Math.round(s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2);
}
