import { celEnvironment } from '../cel/environment.js';
import type { RouteConfig } from './config.js';

/**
 * Routes map a notification to channel names. `match` is CEL over the facts below, each a string
 * (empty when unknown), so `owner == "me" && stage in ["failed", "blocked"]` type-checks at load.
 */

export interface RouteFacts {
  stage: string;
  severity: string;
  task: string;
  agent: string;
  owner: string;
  /** `progress`, `approval` or `alert` (the message kind). */
  kind: string;
}

const environment = celEnvironment({
  variables: {
    stage: 'string',
    severity: 'string',
    task: 'string',
    agent: 'string',
    owner: 'string',
    kind: 'string',
  },
});

type Program = (ctx: RouteFacts) => unknown;

export interface CompiledRoute {
  config: RouteConfig;
  program: Program;
}

export type CompileResult =
  | { ok: true; routes: CompiledRoute[] }
  | { ok: false; problems: { path: string; message: string }[] };

export function compileRoutes(routes: RouteConfig[]): CompileResult {
  const compiled: CompiledRoute[] = [];
  const problems: { path: string; message: string }[] = [];
  routes.forEach((config, i) => {
    const c = environment.compile<Program>(config.match, 'bool');
    if (c.ok) compiled.push({ config, program: c.program });
    else problems.push({ path: `routes.${i}.match`, message: c.message });
  });
  return problems.length ? { ok: false, problems } : { ok: true, routes: compiled };
}

export interface RouteTarget {
  channel: string;
  fallback: string[];
  fallback_after: number;
}

/**
 * Every channel of every matching route, each once (the first route that names it decides its
 * fallback). A route whose expression errors at run time does not match: a broken route must not
 * send a message somewhere nobody meant.
 */
export function selectChannels(routes: CompiledRoute[], facts: RouteFacts): RouteTarget[] {
  const out = new Map<string, RouteTarget>();
  for (const r of routes) {
    let matched = false;
    try {
      matched = r.program(facts) === true;
    } catch {
      matched = false;
    }
    if (!matched) continue;
    for (const channel of r.config.channels) {
      if (!out.has(channel))
        out.set(channel, {
          channel,
          fallback: r.config.fallback ?? [],
          fallback_after: r.config.fallback_after,
        });
    }
  }
  return [...out.values()];
}
