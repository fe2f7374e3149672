import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { approvalsPort } from '../approvals/port.js';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { deliveryPort } from '../delivery/port.js';
import { type Egress, liveEgress } from '../egress/index.js';
import { gatePort } from '../gate/port.js';
import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { tasksPort } from '../tasks/port.js';
import { effectsPort } from '../effects/port.js';
import { reachSections, type ToolConfig } from './config.js';
import { type InProcessTool, toolsOfModule } from './inprocess.js';
import { memoryTools } from './memory.js';
import { type ReachService, reachPort, type TouchSummary } from './port.js';
import { parseTouchRequest } from './protocol.js';
import { buildConfigured, buildInProcess, checkTools, listing, type Tool } from './registry.js';
import { reachRoutes } from './routes.js';
import * as q from './sql.js';
import { Reach } from './touch.js';

export interface ReachModuleOptions {
  /** In-process tools registered by code (tests, the bench, an embedding app), beside `reach.modules`. */
  tools?: InProcessTool[];
  /** The egress `http` tools go through (tests: loopback-only sockets); default from `egress.allow`. */
  egress?: Egress;
  /** Where `*_env` names are read (default process.env). */
  env?: NodeJS.ProcessEnv;
}

const requires = {
  gate: optional(gatePort),
  approvals: optional(approvalsPort),
  tasks: optional(tasksPort),
  delivery: optional(deliveryPort),
  /** The sweep is a singleton: it runs on the cluster's leader (docs/scale.md). */
  cluster: optional(clusterPort),
  effects: optional(effectsPort),
};
type ReachDepsOf = Deps<typeof requires, typeof reachSections>;

const DAY_MS = 86_400_000;
/** Interrupted touches and expired rows are swept this often; GET already reports both correctly. */
const SWEEP_MS = 60_000;

/**
 * Reach (issue #15, seed 002): a guarded tool layer. Tools come from `tools:` (http, sql, command),
 * from files named in `reach.modules` and from code; every touch passes the compiled schema, the gate,
 * the guard and the context processor, and is logged. Serves GET /v1/tools, POST /v1/touch and
 * GET /v1/touch/{id}, and provides `reachPort`, through which the MCP server lists and calls the tools.
 */
export function reachModule(opts: ReachModuleOptions = {}) {
  let engine: Reach | undefined;
  let egress: Egress | undefined;
  let service: ReachService | undefined;
  return {
    get engine() {
      return engine;
    },
    ...defineModule({
      name: 'reach',
      config: reachSections,
      requires,
      provides: [reachPort],
      migrations: new URL('./migrations/', import.meta.url),
      checkConfig: (config) => checkTools((config.tools ?? {}) as Record<string, ToolConfig>),
      routes(app, deps) {
        reachRoutes(app, deps, () => service);
      },
      async start(deps: ReachDepsOf) {
        egress = opts.egress ?? liveEgress(deps);
        const tools = await buildRegistry(deps, opts, egress);
        engine = new Reach(
          {
            db: deps.db,
            vault: deps.vault,
            logger: deps.logger,
            now: deps.now,
            tenant: deps.config.tenant.id,
            config: deps.config.reach,
            vaultTtlMs: deps.config.vault.retention_days * DAY_MS,
            emit: (e, db) => deps.emit(e, db),
            gate: () => deps.gate,
            approvals: () => deps.approvals,
            tasks: () => deps.tasks,
            delivery: () => deps.delivery,
            effects: () => deps.effects,
            publicUrl: deps.config.server.public_url,
          },
          tools,
        );
        const r = engine;
        // Sorted on the first listing: localeCompare maps ICU's collation data (~2 MB resident), which
        // an idle gateway no agent has asked for its tools does not need.
        let listed: ReturnType<typeof listing>[] | undefined;
        const list = () =>
          (listed ??= [...tools.values()].sort((a, b) => a.name.localeCompare(b.name)).map(listing));
        service = {
          list,
          async touch(req, caller, o) {
            const parsed = parseTouchRequest(req);
            return parsed.ok ? r.touch(parsed.req, caller, o) : parsed.response;
          },
          status: (caller, id) => r.status(caller, id),
          async recent({ limit, tool }) {
            const rows = await deps.db.query<q.TouchRow>(
              q.selectRecentTouches(deps.config.tenant.id, tool, limit),
            );
            return rows.map(touchSummary);
          },
        };
        deps.provide(reachPort, service);
        if (tools.size > 0) deps.logger.info({ tools: tools.size }, 'reach: registry loaded');
      },
      workers(deps) {
        return [
          leaderOnly(() => deps.cluster, {
            name: 'reach.sweep',
            intervalMs: SWEEP_MS,
            tick: async () => {
              const now = deps.now();
              // A touch still `running` a minute past its deadline belongs to a gateway that stopped.
              await deps.db.query(q.failInterrupted(now - SWEEP_MS, now));
              await deps.db.query(q.deleteExpiredTouches(now));
            },
          }),
        ];
      },
      async stop() {
        await engine?.stop();
        if (!opts.egress) await egress?.close();
      },
    }),
  };
}

async function buildRegistry(
  deps: ReachDepsOf,
  opts: ReachModuleOptions,
  egress: Egress,
): Promise<Map<string, Tool>> {
  const env = opts.env ?? process.env;
  const all: Tool[] = buildConfigured(deps.config.tools, {
    env,
    egress,
    warn: (tool, message) => deps.logger.warn({ tool }, `reach: tools.${tool}: ${message}`),
  });
  for (const path of deps.config.reach.modules) {
    const mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
    const found = toolsOfModule(mod);
    if (found.length === 0) throw new Error(`reach.modules: ${path} exports no tool ({ name, schema, run })`);
    found.forEach((t, i) => {
      all.push(buildInProcess(t, `reach.modules[${path}][${i}]`));
    });
  }
  (opts.tools ?? []).forEach((t, i) => {
    all.push(buildInProcess(t, `tools[${i}]`));
  });
  if (deps.config.reach.memory.enabled) {
    const m = deps.config.reach.memory;
    for (const t of memoryTools(
      { db: deps.db, tenant: deps.config.tenant.id, now: deps.now },
      { shortTerm: m.short_term, maxValueBytes: m.max_value_bytes },
    ))
      all.push(buildInProcess(t, `memory.${t.name}`, 'memory'));
  }
  const byName = new Map<string, Tool>();
  const twice: string[] = [];
  for (const t of all) {
    if (byName.has(t.name)) twice.push(t.name);
    byName.set(t.name, t);
  }
  if (twice.length > 0)
    throw new Error(
      `reach: tool names registered twice: ${[...new Set(twice)].join(', ')}; rename one of each`,
    );
  return byName;
}

function touchSummary(r: q.TouchRow): TouchSummary {
  return {
    request_id: r.request_id,
    caller: r.caller,
    tool: r.tool,
    channel: r.channel,
    status: r.status,
    task_id: r.task_id,
    error_code: r.error_code,
    cost_ms: r.cost_ms === null ? null : Number(r.cost_ms),
    created_at: new Date(Number(r.created_at)).toISOString(),
  };
}
