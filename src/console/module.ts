import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Hono } from 'hono';
import { approvalsPort } from '../approvals/port.js';
import { deliveryPort } from '../delivery/port.js';
import { AppError, errorBody } from '../errors/index.js';
import { gatePort } from '../gate/port.js';
import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { deriveKey } from '../keys/derive.js';
import { reachPort } from '../reach/port.js';
import { awayPort, sessionWatchPort } from '../signals/port.js';
import { tasksPort } from '../tasks/port.js';
import { consoleConfigSchema } from './config.js';
import { type ConsoleEnv, html, wantsHtml } from './http.js';
import { Glance, GLANCE_SAMPLE_MS } from './glance.js';
import { LiveHub } from './live.js';
import { approvalPages } from './pages/approvals.js';
import { authPages } from './pages/auth.js';
import { deliveryPages } from './pages/deliveries.js';
import { eventPages } from './pages/events.js';
import { metricPages } from './pages/metrics.js';
import { policyPages } from './pages/policy.js';
import { sessionPages } from './pages/sessions.js';
import { shadowPages } from './pages/shadow.js';
import { taskPages } from './pages/tasks.js';
import { toolPages } from './pages/tools.js';
import { Sessions } from './sessions.js';
import { bareLayout, escapeHtml } from './shell.js';

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

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const packageFile = (path: string) => createRequire(import.meta.url).resolve(path);

/**
 * The browser's files: read once at start, served with a long-lived but revalidated cache. The chart
 * library (uPlot, the metrics page only) is served from its package as published.
 */
export const ASSETS: Record<string, { path: () => string | URL; type: string }> = {
  'console.js': { path: () => new URL('./assets/console.js', import.meta.url), type: JS },
  'console.css': { path: () => new URL('./assets/console.css', import.meta.url), type: CSS },
  'views.css': { path: () => new URL('./assets/views.css', import.meta.url), type: CSS },
  'metrics.js': { path: () => new URL('./assets/metrics.js', import.meta.url), type: JS },
  'uPlot.iife.min.js': { path: () => packageFile('uplot/dist/uPlot.iife.min.js'), type: JS },
  'uPlot.min.css': { path: () => packageFile('uplot/dist/uPlot.min.css'), type: CSS },
};

export function loadAssets(): Map<string, { body: string; type: string }> {
  const out = new Map<string, { body: string; type: string }>();
  for (const [name, a] of Object.entries(ASSETS))
    out.set(name, { body: readFileSync(a.path(), 'utf8'), type: a.type });
  return out;
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
      const assets = loadAssets();
      const r = new Hono<ConsoleEnv>();
      r.onError((err, c) => {
        const known = err instanceof AppError ? err : undefined;
        if (!known) deps.logger.error({ err, path: c.req.path }, 'console: unhandled error');
        const e = known ?? new AppError('internal', `Internal error (request ${c.get('requestId')}).`);
        if (wantsHtml(c)) {
          const back = '<p><a href="/console/">Back to the console</a></p>';
          return html(c, bareLayout(errorTitle(e), `<p>${escapeHtml(e.message)}</p>${back}`), e.status);
        }
        return c.json(errorBody(e), e.status as 400);
      });
      r.get('/console/assets/:name', (c) => {
        const a = assets.get(c.req.param('name'));
        if (!a) throw new AppError('not_found', 'no such asset');
        return c.body(a.body, 200, {
          'content-type': a.type,
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
        });
      });
      authPages(r, ctx);
      approvalPages(r, ctx);
      taskPages(r, ctx);
      sessionPages(r, ctx);
      eventPages(r, ctx);
      deliveryPages(r, ctx);
      policyPages(r, ctx);
      shadowPages(r, ctx);
      toolPages(r, ctx);
      metricPages(r, ctx);
      r.get('/console', (c) => c.redirect('/console/', 301));
      // Mounted at the root with full paths: the inbox is `/console/` (CONTRACT.md), trailing slash included.
      app.route('/', r);
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

function errorTitle(e: AppError): string {
  if (e.status === 401) return 'Sign in needed';
  if (e.status === 403) return 'Not allowed';
  if (e.status === 404) return 'Not found';
  if (e.status === 409 || e.status === 410) return 'Nothing was changed';
  if (e.status >= 500) return 'Something went wrong';
  return 'Bad request';
}
