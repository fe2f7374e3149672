import type { Context } from 'hono';
import { approvalsPort } from '../approvals/port.js';
import { deliveryPort } from '../delivery/port.js';
import { gatePort } from '../gate/port.js';
import { type AppEnv, type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { deriveKey } from '../keys/derive.js';
import { reachPort } from '../reach/port.js';
import { awayPort, sessionWatchPort } from '../signals/port.js';
import { tasksPort } from '../tasks/port.js';
import { consoleConfigSchema } from './config.js';
import { Glance, GLANCE_SAMPLE_MS } from './glance.js';
import { LiveHub } from './live.js';
import type { ConsolePages } from './pages.js';
import { Sessions } from './sessions.js';

const requires = {
  approvals: optional(approvalsPort),
  tasks: optional(tasksPort),
  delivery: optional(deliveryPort),
  gate: optional(gatePort),
  reach: optional(reachPort),
  away: optional(awayPort),
  watch: optional(sessionWatchPort),
};
const sections = { console: consoleConfigSchema.prefault({}) };
/** What the console's pages receive: the core, its `console:` section, and whichever ports run. */
export type ConsoleDeps = Deps<typeof requires, typeof sections>;

/** What every page module gets: the deps, the sessions, the live hub. */
export interface ConsoleCtx {
  deps: ConsoleDeps;
  sessions: () => Sessions;
  hub: LiveHub;
  glance: Glance;
}

/**
 * The web console at `/console/`: server-rendered pages over the other modules' ports and the log,
 * a small script for live updates (Server-Sent Events from a relay subscriber) and forms. Sign-in
 * with an approver or admin key → a server-side session (docs/console.md).
 */
export function consoleModule() {
  const hub = new LiveHub();
  let sessions: Sessions | undefined;
  let glance: Glance | undefined;
  const ensureGlance = (deps: ConsoleDeps): Glance => {
    glance ??= new Glance({
      registry: deps.metrics.registry,
      approvals: () => deps.approvals,
      now: deps.now,
    });
    return glance;
  };
  const ensure = (deps: ConsoleDeps): Sessions => {
    sessions ??= new Sessions({
      db: deps.db,
      keys: deps.keys,
      now: deps.now,
      macKey: deriveKey(deps.vaultKey, 'consoleSession'),
      ttlMs: deps.config.console.session_ttl_seconds * 1000,
    });
    return sessions;
  };

  const manifest = defineModule({
    name: 'console',
    config: sections,
    requires,
    migrations: new URL('./migrations/', import.meta.url),
    routes(app, deps) {
      if (!deps.config.console.enabled) return;
      const ctx: ConsoleCtx = { deps, sessions: () => ensure(deps), hub, glance: ensureGlance(deps) };
      // The pages load with the first request to /console (issue 13's idle memory): a gateway no one
      // opens the console of does not hold them. `pages.ts` builds them on a Hono app of their own.
      let pages: Promise<ConsolePages> | undefined;
      const load = () => (pages ??= import('./pages.js').then((m) => m.consolePages(ctx)));
      const serve = async (c: Context<AppEnv>) => (await load())(c);
      // Mounted at the root with full paths: the inbox is `/console/` (CONTRACT.md), trailing slash included.
      app.all('/console', serve);
      app.all('/console/*', serve);
    },
    start(deps) {
      ensure(deps);
    },
    subscribers() {
      return [hub.subscriber()];
    },
    workers(deps) {
      if (!deps.config.console.enabled) return [];
      const g = ensureGlance(deps);
      return [
        { name: 'console.glance', intervalMs: GLANCE_SAMPLE_MS, immediate: true, tick: () => g.sample() },
      ];
    },
    stop() {
      hub.closeAll();
    },
  });
  return {
    ...manifest,
    /** Open live streams in this process (tests wait for a browser's stream before they publish). */
    liveClients: () => hub.size,
    /** Takes a metrics sample now (tests do, instead of waiting for the worker's interval). */
    sampleGlance: () => glance?.sample(),
  };
}
