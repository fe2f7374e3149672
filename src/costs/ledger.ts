import type { Envelope } from '../envelope/index.js';
import { once } from '../log/index.js';
import type { Vault } from '../log/vault.js';
import type { Logger } from 'pino';
import type { Db } from '../store/port.js';
import type { CostsConfig } from './config.js';
import { dayOf } from './day.js';
import { costMicros, tokensOf } from './prices.js';
import { addToLedger, type CursorRow, getCursor, moveCursor } from './sql.js';
import { allowedTranscript, expandRoots, readFrom, transcriptDialect } from './transcript.js';
import { claudeCodeUsage, codexUsage, type ModelUsage } from './usage.js';

/** The ledger's relay subscriber; its name keys the inbox, so it never changes. */
export const SUBSCRIBER = 'costs.ledger';

/** A tool call is counted once, at its intent (a hook's `PreToolUse`, a gate evaluation with a session). */
const TOOL_TYPES = new Set(['agent.tool.requested']);
/** A turn ended: counted, and the runtime's transcript is read for its usage. */
const TURN_TYPES = new Set(['agent.turn.completed', 'agent.turn.failed']);
/** A subagent ended: its own transcript (`agent_transcript_path`) is read; no turn of the session. */
const SUBAGENT_TYPES = new Set(['agent.subagent.stopped']);
/** Activity that only widens the wall-time span of its row. */
const SPAN_TYPES = new Set([
  'agent.session.started',
  'agent.session.ended',
  'agent.prompt.submitted',
  'agent.tool.completed',
  'agent.tool.failed',
  'agent.task.started',
  'agent.task.completed',
  'agent.task.failed',
  'agent.task.canceled',
]);

export function accepts(type: string): boolean {
  return TOOL_TYPES.has(type) || TURN_TYPES.has(type) || SUBAGENT_TYPES.has(type) || SPAN_TYPES.has(type);
}

interface CursorMove {
  source: string;
  fromOffset: number;
  offset: number;
  lastId: string | null;
  totals: { input: number; cached: number; output: number };
  model: string | null;
}

export interface LedgerDeps {
  db: Db;
  vault: Vault;
  logger: Logger;
  now: () => number;
  config: () => CostsConfig;
}

/**
 * The projection: each accepted event adds to its row (UTC day × tenant × agent × task × session) in
 * one transaction with its inbox mark, so a redelivered event counts once. Usage read from a transcript
 * moves that transcript's cursor in the same transaction, from where the read began only.
 */
export class Ledger {
  private readonly roots: string[];

  constructor(private readonly d: LedgerDeps) {
    this.roots = expandRoots(d.config().transcripts.roots);
  }

  async handle(event: Envelope): Promise<void> {
    const at = Date.parse(event.occurred_at);
    const read =
      TURN_TYPES.has(event.type) || SUBAGENT_TYPES.has(event.type) ? await this.usage(event) : undefined;
    await once(
      this.d.db,
      SUBSCRIBER,
      event.event_id,
      async (tx) => {
        let usage = read?.usage ?? [];
        if (read?.move) {
          const moved = await tx.query(moveCursor({ ...read.move, now: this.d.now() }));
          // Another reader moved the cursor first and counted these bytes: count nothing twice.
          if (moved.length === 0) usage = [];
        }
        const prices = this.d.config().prices;
        const sum = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, costMicros: 0, unpriced: 0 };
        for (const u of usage) {
          sum.input += u.input;
          sum.output += u.output;
          sum.cacheRead += u.cache_read;
          sum.cacheWrite += u.cache_write;
          const cost = costMicros(prices, u);
          if (cost === undefined) sum.unpriced += tokensOf(u);
          else sum.costMicros += cost;
        }
        await tx.query(
          addToLedger(tx.dialect, {
            day: dayOf(at),
            tenantId: event.tenant_id,
            agentId: event.actor.agent_id ?? '',
            taskId: event.execution.task_id ?? '',
            sessionId: event.execution.session_id ?? '',
            turns: TURN_TYPES.has(event.type) ? 1 : 0,
            toolCalls: TOOL_TYPES.has(event.type) ? 1 : 0,
            ...sum,
            at,
          }),
        );
      },
      this.d.now(),
    );
  }

  /** The usage a turn's transcript added since the last read; undefined when there is none to read. */
  private async usage(event: Envelope): Promise<{ usage: ModelUsage[]; move: CursorMove } | undefined> {
    const cfg = this.d.config().transcripts;
    const dialect = transcriptDialect(event.runtime?.kind);
    if (!cfg.read || !dialect || !event.payload_ref) return undefined;
    try {
      const raw = await this.d.vault.get(event.payload_ref);
      if (!raw) return undefined;
      const hook = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      const named = SUBAGENT_TYPES.has(event.type) ? hook['agent_transcript_path'] : hook['transcript_path'];
      const path = await allowedTranscript(named, this.roots);
      if (!path) return undefined;
      const source = `${dialect}:${path}`;
      const row = (await this.d.db.query<CursorRow>(getCursor(source)))[0];
      const fromOffset = row ? Number(row.byte_offset) : -1;
      const { text, next, restarted } = await readFrom(path, Math.max(0, fromOffset), cfg.max_read_bytes);
      const before =
        restarted || !row
          ? { input: 0, cached: 0, output: 0 }
          : {
              input: Number(row.total_input),
              cached: Number(row.total_cached),
              output: Number(row.total_output),
            };
      const lastId = restarted ? null : (row?.last_id ?? null);
      const model = restarted ? null : (row?.model ?? null);
      const chunk =
        dialect === 'claude-code'
          ? claudeCodeUsage(text, lastId)
          : codexUsage(text, before, model, typeof hook['model'] === 'string' ? hook['model'] : null);
      return {
        usage: chunk.usage,
        move: {
          source,
          fromOffset,
          offset: next,
          lastId: chunk.lastId,
          totals: chunk.totals ?? before,
          model: chunk.model ?? model,
        },
      };
    } catch (err) {
      // A transcript we cannot read costs the turn its token figures, never the turn itself.
      this.d.logger.warn({ err, event_id: event.event_id }, 'costs: could not read the turn transcript');
      return undefined;
    }
  }
}
