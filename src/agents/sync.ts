import type { Logger } from 'pino';
import type { Db } from '../store/port.js';
import { readCard } from './card.js';
import type { AgentSource, Registry } from './registry.js';
import * as q from './sql.js';

/**
 * Registry state shared between replicas. Heartbeats, status, reported load and the EWMAs are written
 * to the `agents` rows, and every open attempt is a row of `agent_waits` (the wait-for graph, and the
 * calls open to each agent from every replica). Routing stays in memory, so each replica re-reads the
 * rows every `SYNC_MS`, and at once when another replica broadcasts a heartbeat or a registration
 * (PostgreSQL NOTIFY through the cluster port). The wait-for graph is not taken from here: each request
 * reads it from the store (collaborate.ts), so a cycle across replicas is refused exactly.
 */

/** How stale a replica's routing view may be (docs/agents.md): a heartbeat elsewhere counts within it. */
export const SYNC_MS = 1_000;
/** Attempts whose process is gone are recovered (recover.ts) every this many syncs. */
const SWEEP_EVERY = 30;

/** The cluster topic a heartbeat or registration is broadcast on (payload: the agent id). */
export const AGENTS_TOPIC = 'agents';
/** The terminal push of a remote task, told to every replica (payload: the remote task id). */
export const PUSH_TOPIC = 'agents-push';

export class RegistrySync {
  private running: Promise<void> | undefined;
  private again = false;
  private passes = 0;
  /** Agents configured elsewhere whose token this replica lacks (warned once, not routed). */
  private readonly untokened = new Set<string>();

  constructor(
    private readonly d: {
      db: Db;
      tenant: string;
      now: () => number;
      registry: Registry;
      logger: Logger;
      /** Where another replica's config agent's `token_env` is read. */
      env: NodeJS.ProcessEnv;
      /** Every `SWEEP_EVERY` passes: interrupted attempts settled, abandoned collaborations ended. */
      sweep: () => Promise<void>;
    },
  ) {}

  /** One pass now; a call while one runs asks for another right after it (nothing is missed). */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async pass(): Promise<void> {
    const { db, tenant, registry } = this.d;
    const rows = await db.query<q.AgentStateRow>(q.selectAgentStates(tenant, this.d.now()));
    for (const row of rows) {
      let a = registry.get(row.id);
      if (!a || a.cardVersion !== Number(row.card_version)) {
        const [full] = await db.query<q.AgentRow>(q.selectAgent(tenant, row.id));
        if (!full) continue;
        // An agent another replica's config names (its card fetched there) is called from here with
        // the token its `token_env` names in this replica's environment (replicas.test.ts).
        const token = a?.token ?? (full.token_env ? this.d.env[full.token_env] : undefined);
        if (!a && full.token_env && !token) {
          if (!this.untokened.has(row.id))
            this.d.logger.warn(
              { agent: row.id },
              `agents: ${row.id} is configured on another replica; ${full.token_env} is not set here, so it is not routed from here`,
            );
          this.untokened.add(row.id);
          continue;
        }
        try {
          a = registry.put(row.id, await readCard(JSON.parse(full.card)), {
            source: full.source as AgentSource,
            cardUrl: full.card_url,
            weight: Number(full.weight),
            token,
            tokenEnv: full.token_env,
            registeredBy: full.registered_by,
            row: full,
            lastSeen: null,
            cardVersion: Number(full.card_version),
          });
        } catch (err) {
          this.d.logger.warn(
            { agent: row.id, err: (err as Error).message },
            'agents: a stored card does not read',
          );
          continue;
        }
      }
      registry.applyState(a, row, db.dialect === 'sqlite');
    }
    if (++this.passes % SWEEP_EVERY === 0) await this.d.sweep();
  }
}
