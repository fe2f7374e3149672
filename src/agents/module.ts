import { randomUUID } from 'node:crypto';
import { sdkRoot } from '../a2a/wire.js';
import { type ClusterService, clusterPort, RESYNC } from '../cluster/port.js';
import { type Egress, liveEgress } from '../egress/index.js';
import type { Envelope } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { gatePort } from '../gate/port.js';
import { DEFAULT_MAX_DEPTH } from '../ingress/admission/config.js';
import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { tasksPort } from '../tasks/port.js';
import { CardError, fetchCard, type ReadCard, readCard } from './card.js';
import { Engine } from './collaborate.js';
import { agentsSections } from './config.js';
import { type AgentsService, agentsPort } from './port.js';
import { type RecoverDeps, recoverOrphans } from './recover.js';
import { type AgentRecord, Registry } from './registry.js';
import { ENDED_NAMES, type PushTarget, Remote } from './remote.js';
import { type AgentsRoutes, agentsRoutes } from './routes.js';
import * as q from './sql.js';
import { AGENTS_TOPIC, PUSH_TOPIC, RegistrySync, SYNC_MS } from './sync.js';

export interface AgentsModuleOptions {
  /** The egress cards and calls go through (tests: loopback); default from `egress.allow`. */
  egress?: Egress;
  /** Where `token_env` and the push source's `token_env` are read (default process.env). */
  env?: NodeJS.ProcessEnv;
}

const requires = { gate: optional(gatePort), tasks: optional(tasksPort), cluster: optional(clusterPort) };
type AgentsDeps = Deps<typeof requires, typeof agentsSections>;

/** Config agents' cards are fetched again this often (a new skill shows up without a restart). */
const REFRESH_MS = 5 * 60_000;

/** A push's delivery id as the receiver derives it from an SDK push: `<task id>:<state>`. */
const DELIVERY_ID = /^(.+):(TASK_STATE_[A-Z_]+)$/;

/** What the module reads of `sources:` (the ingress section) to find its own push receiver. */
interface SourceEntry {
  source?: { type?: string; token?: string | string[]; token_env?: string | string[] };
}

/**
 * Agents working together (issue #16, seed 002 §6): a registry of remote A2A agents, capability and
 * weighted routing, collaborations with receipts, timeouts and fallback, no wait-for cycles. Serves
 * /v1/agents and /v1/collaborations; provides `agentsPort` (the MCP tool `ask_agent`).
 */
export function agentsModule(opts: AgentsModuleOptions = {}) {
  let routes: AgentsRoutes | undefined;
  let egress: Egress | undefined;
  let remote: Remote | undefined;
  let sync: RegistrySync | undefined;
  let unlisten: (() => void) | undefined;
  const registry = new Registry();
  // Remote cancels a recovery started; stop() lets them finish.
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  return {
    registry,
    ...defineModule({
      name: 'agents',
      config: agentsSections,
      requires,
      provides: [agentsPort],
      migrations: new URL('./migrations/', import.meta.url),
      routes(app, deps) {
        agentsRoutes(app, deps, () => routes);
      },
      async start(deps: AgentsDeps) {
        const env = opts.env ?? process.env;
        const tenant = deps.config.tenant.id;
        const ttlMs = deps.config.agents_heartbeat_ttl_seconds * 1000;
        egress = opts.egress ?? liveEgress(deps);
        const out = egress;
        const rows = new Map(
          (await deps.db.query<q.AgentRow>(q.selectAgents(tenant))).map((r) => [r.id, r] as const),
        );
        for (const [id, entry] of Object.entries(deps.config.agents)) {
          const token = entry.token_env ? env[entry.token_env] : undefined;
          if (entry.token_env && !token)
            deps.logger.warn(
              { agent: id },
              `agents.${id}.token_env: ${entry.token_env} is not set; calls carry no token`,
            );
          const row = rows.get(id);
          let read: ReadCard | undefined;
          let seen: number | null = null;
          try {
            read = await fetchCard(entry.card_url, out);
            seen = deps.now();
          } catch (err) {
            if (!(err instanceof CardError) || !err.retryable)
              throw new Error(`agents.${id}.card_url: ${(err as Error).message}`);
            deps.logger.warn({ agent: id, err: err.message }, 'agents: card not fetched; retried later');
            if (row) read = await readCard(JSON.parse(row.card));
          }
          if (read) await putConfigAgent(deps, registry, env, id, read, seen, row);
        }
        for (const row of rows.values()) {
          if (row.source !== 'api' || deps.config.agents[row.id]) continue;
          try {
            registry.put(row.id, await readCard(JSON.parse(row.card)), {
              source: 'api',
              cardUrl: row.card_url,
              weight: Number(row.weight),
              token: undefined,
              registeredBy: row.registered_by,
              row,
              lastSeen: null,
            });
          } catch (err) {
            deps.logger.warn(
              { agent: row.id, err: (err as Error).message },
              'agents: a stored card no longer reads',
            );
          }
        }
        remote = new Remote(out, () => pushTarget(deps, env));
        const rem = remote;
        const cluster = deps.cluster;
        const recovery: RecoverDeps = {
          db: deps.db,
          tenant,
          now: deps.now,
          logger: deps.logger,
          registry,
          remote: rem,
          emit: (e, db) => deps.emit(e, db),
          event: async (id) => (await deps.log.get(id))?.envelope,
        };
        // Attempts whose process is gone: SQLite is one gateway, so at its start every open attempt is
        // one; on PostgreSQL those of replicas that are not alive, and rows past their expiry (without a
        // cluster, only those). The leader repeats it in the sweep, for replicas that die later.
        const recover = async (atStart: boolean) => {
          const which =
            deps.db.dialect === 'sqlite'
              ? atStart
                ? ({ all: true } as const)
                : { alive: null, now: deps.now() }
              : { alive: cluster ? await aliveReplicas(cluster) : null, now: deps.now() };
          const { cancels } = await recoverOrphans(recovery, which);
          track(cancels);
          await deps.db.query(q.failAbandoned(tenant, deps.now()));
        };
        sync = new RegistrySync({
          db: deps.db,
          tenant,
          now: deps.now,
          registry,
          logger: deps.logger,
          env,
          sweep: async () => {
            if (!cluster || cluster.isLeader()) await recover(false);
          },
        });
        await sync.run();
        await recover(true);
        const broadcast = async (db: typeof deps.db, id: string) => {
          await cluster?.broadcast(db, AGENTS_TOPIC, id);
        };
        const unlistenAgents = cluster?.listen(AGENTS_TOPIC, () => {
          void sync
            ?.run()
            .catch((err: unknown) =>
              deps.logger.warn({ err: (err as Error).message }, 'agents: registry sync failed'),
            );
        });
        // A push whose relay row another replica claimed, for an attempt waiting here.
        const unlistenPushes = cluster?.listen(PUSH_TOPIC, (taskId) => {
          if (taskId !== RESYNC) remote?.settle(taskId, deps.now());
        });
        unlisten = () => {
          unlistenAgents?.();
          unlistenPushes?.();
        };

        if (!pushTarget(deps, env))
          deps.logger.info(
            'agents: no a2a-push source with a token; collaborations poll GetTask instead of waiting for pushes',
          );
        const engine = new Engine({
          db: deps.db,
          tenant,
          now: deps.now,
          logger: deps.logger,
          emit: (e, db) => deps.emit(e, db),
          gate: () => deps.gate,
          tasks: () => deps.tasks,
          registry,
          remote,
          ttlMs,
          maxDepth: loopDepth(deps),
          replica: deps.cluster?.replicaId ?? `proc_${randomUUID()}`,
        });
        const service: AgentsService = {
          list: () => registry.all().map((a) => registry.listing(a, deps.now(), ttlMs)),
          collaborate: (req, caller) => engine.collaborate(req, caller),
          receipt: (refId, caller) => engine.receipt(refId, caller),
        };
        const stateOf = (a: AgentRecord, now = deps.now()) =>
          q.updateAgentState({
            tenant,
            id: a.id,
            status: a.status,
            load: a.reportedLoad,
            successEwma: a.successEwma,
            latencyEwma: a.latencyEwma,
            lastSeen: a.lastSeen,
            now,
          });
        routes = {
          service: () => service,
          known: (id) => registry.has(id),
          async register(req, by) {
            if (deps.config.agents[req.id] || registry.get(req.id)?.source === 'config')
              throw new AppError(
                'conflict',
                `agent ${req.id} is configured under agents: (here or on another replica); its card comes from there`,
              );
            let read: ReadCard;
            try {
              read = req.card_url ? await fetchCard(req.card_url, out) : await readCard(req.card);
            } catch (err) {
              if (err instanceof CardError) throw new AppError('AGENT_CARD_INVALID', err.message);
              throw err;
            }
            const now = deps.now();
            const weight = req.weight ?? 1;
            const a = registry.put(req.id, read, {
              source: 'api',
              cardUrl: req.card_url ?? null,
              weight,
              token: undefined,
              registeredBy: by.name,
              lastSeen: now,
            });
            await deps.db.tx(async (tx) => {
              await tx.query(
                q.upsertAgent({
                  tenant,
                  id: req.id,
                  source: 'api',
                  cardUrl: req.card_url ?? null,
                  card: JSON.stringify((await sdkRoot()).AgentCard.toJSON(read.card)),
                  weight,
                  lastSeen: now,
                  registeredBy: by.name,
                  now,
                }),
              );
              await tx.query(stateOf(a, now));
              await broadcast(tx, req.id);
              await deps.emit(
                {
                  type: 'agent.agent.registered',
                  actor: { agent_id: by.name },
                  subject: { resource_ref: `agent:${req.id}` },
                  redacted_summary: { id: req.id, name: read.name, skills: read.skills, by: by.name },
                },
                tx,
              );
            });
            return registry.listing(a, now, ttlMs);
          },
          async heartbeat(id, req) {
            const a = registry.get(id)!;
            // The row first, then this replica's copy: a sync reading the row meanwhile cannot undo it.
            const next = { ...a, load: a.load };
            registry.heartbeat(next, deps.now(), req.load, req.status);
            await deps.db.tx(async (tx) => {
              await tx.query(stateOf(next));
              await broadcast(tx, id);
            });
            registry.heartbeat(a, next.lastSeen ?? deps.now(), req.load, req.status);
            return registry.listing(a, deps.now(), ttlMs);
          },
        };
        deps.provide(agentsPort, service);
        if (registry.all().length > 0)
          deps.logger.info({ agents: registry.all().length }, 'agents: registry loaded');
      },
      subscribers(deps) {
        return [
          {
            name: 'agents.pushes',
            // Settling wakes an attempt in this process; doing it twice is harmless.
            ownsInbox: true,
            accepts: (type) => type === 'integration.webhook.accepted',
            handle: (e) => settlePush(e, deps, remote),
          },
        ];
      },
      workers(deps) {
        return [
          {
            name: 'agents.sync',
            intervalMs: SYNC_MS,
            tick: async () => {
              await sync?.run();
            },
          },
          {
            name: 'agents.cards',
            intervalMs: REFRESH_MS,
            tick: async () => {
              for (const [id, entry] of Object.entries(deps.config.agents)) {
                try {
                  const read = await fetchCard(entry.card_url, egress!);
                  // A card fetched is a sign of life only for an agent never seen before.
                  const seen = registry.has(id) ? null : deps.now();
                  await putConfigAgent(deps, registry, opts.env ?? process.env, id, read, seen);
                } catch (err) {
                  deps.logger.warn({ agent: id, err: (err as Error).message }, 'agents: card refresh failed');
                }
              }
            },
          },
        ];
      },
      async stop() {
        unlisten?.();
        await Promise.all(pending);
        if (!opts.egress) await egress?.close();
      },
    }),
  };
}

/**
 * A config agent's card, as fetched (or as last stored), into the registry and its row: at start and
 * on each refresh. The row names `token_env` (never the token), so a replica whose own config does
 * not list the agent can still call it with the token from its own environment (sync.ts).
 */
async function putConfigAgent(
  deps: AgentsDeps,
  registry: Registry,
  env: NodeJS.ProcessEnv,
  id: string,
  read: ReadCard,
  lastSeen: number | null,
  row?: q.AgentRow,
): Promise<void> {
  const entry = deps.config.agents[id]!;
  registry.put(id, read, {
    source: 'config',
    cardUrl: entry.card_url,
    weight: entry.weight,
    token: entry.token_env ? env[entry.token_env] : undefined,
    tokenEnv: entry.token_env ?? null,
    registeredBy: 'config',
    lastSeen,
    ...(row ? { row } : {}),
  });
  await deps.db.query(
    q.upsertAgent({
      tenant: deps.config.tenant.id,
      id,
      source: 'config',
      cardUrl: entry.card_url,
      tokenEnv: entry.token_env ?? null,
      card: JSON.stringify(read.json),
      weight: entry.weight,
      lastSeen,
      registeredBy: 'config',
      now: deps.now(),
    }),
  );
}

/** The replicas alive now (this one included): an attempt of any other has no process watching it. */
async function aliveReplicas(cluster: ClusterService): Promise<string[]> {
  const view = await cluster.view();
  return [cluster.replicaId, ...view.replicas.filter((r) => r.alive).map((r) => r.id)];
}

/** `loop.max_depth` (the ingress section: derived work's storm control), read as data. */
function loopDepth(deps: AgentsDeps): number {
  const loop = (deps.config as unknown as { loop?: { max_depth?: number } }).loop;
  return loop?.max_depth ?? DEFAULT_MAX_DEPTH;
}

/**
 * This gateway's own push receiver: the first `sources:` entry (by name) of `type: a2a-push` with a
 * shared token, at `server.public_url`. Read when a call is made: the URL may be set after start.
 */
function pushTarget(deps: AgentsDeps, env: NodeJS.ProcessEnv): PushTarget | undefined {
  const base = deps.config.server.public_url;
  if (!base) return undefined;
  const sources = ((deps.config as unknown as { sources?: Record<string, SourceEntry> }).sources ??
    {}) as Record<string, SourceEntry>;
  for (const name of Object.keys(sources).sort()) {
    const s = sources[name]?.source;
    if (s?.type !== 'a2a-push') continue;
    const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    const envName = first(s.token_env);
    const token = first(s.token) ?? (envName ? env[envName] : undefined);
    if (token) return { url: `${base.replace(/\/+$/, '')}/v1/ingress/${name}`, token };
  }
  return undefined;
}

/** An accepted `a2a-push` delivery: if it ends a task an attempt waits on, wake the attempt. */
async function settlePush(e: Envelope, deps: AgentsDeps, remote: Remote | undefined): Promise<void> {
  const facts = e.redacted_summary as { source_type?: unknown; delivery_id?: unknown };
  if (!remote || facts.source_type !== 'a2a-push' || typeof facts.delivery_id !== 'string') return;
  // On PostgreSQL any replica's relay may claim the push: one not waited on here is told to the others.
  const settle = async (taskId: string) => {
    if (remote.settle(taskId, deps.now()) || deps.db.dialect !== 'postgres') return;
    await deps.cluster?.broadcast(deps.db, PUSH_TOPIC, taskId);
  };
  const m = DELIVERY_ID.exec(facts.delivery_id);
  if (m) {
    if (ENDED_NAMES.has(m[2]!)) await settle(m[1]!);
    return;
  }
  // A sender with its own event ids: the body says which task and state.
  if (!e.payload_ref) return;
  const body = await deps.vault.get(e.payload_ref);
  if (!body) return;
  let v: {
    task?: { id?: unknown; status?: { state?: unknown } };
    statusUpdate?: { taskId?: unknown; status?: { state?: unknown } };
  };
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return;
  }
  const id = v.task?.id ?? v.statusUpdate?.taskId;
  const state = v.task?.status?.state ?? v.statusUpdate?.status?.state;
  if (typeof id === 'string' && typeof state === 'string' && ENDED_NAMES.has(state)) await settle(id);
}
