import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Context, Hono } from 'hono';
import { AppError, errorBody } from '../errors/index.js';
import type { AppEnv } from '../kernel/module.js';
import { type ConsoleEnv, html, wantsHtml } from './http.js';
import type { ConsoleCtx } from './module.js';
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
import { bareLayout, escapeHtml } from './shell.js';

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const packageFile = (path: string) => createRequire(import.meta.url).resolve(path);

/**
 * The browser's files: read once when the pages load, served with a long-lived but revalidated cache. The chart
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

/** Answers one request to `/console` or below it (the app's own middleware has already run). */
export type ConsolePages = (c: Context<AppEnv>) => Promise<Response>;

/**
 * Every console page on a Hono app of its own, built by the console module with the first request
 * to /console. A request reaches it with the app's request id (and hands back the `closeConnection`
 * a body reader set); what matches no page answers as the app's not-found does.
 */
export function consolePages(ctx: ConsoleCtx): ConsolePages {
  const { deps } = ctx;
  const assets = loadAssets();
  const outer = new WeakMap<Request, Context<AppEnv>>();
  const r = new Hono<ConsoleEnv>();
  r.use('*', async (c, next) => {
    const parent = outer.get(c.req.raw);
    if (parent) c.set('requestId', parent.get('requestId'));
    await next();
    if (parent && c.get('closeConnection')) parent.set('closeConnection', true);
  });
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
  r.notFound((c) =>
    c.json(errorBody(new AppError('not_found', `no route for ${c.req.method} ${c.req.path}`)), 404),
  );
  return async (c) => {
    outer.set(c.req.raw, c);
    return r.fetch(c.req.raw, c.env);
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
