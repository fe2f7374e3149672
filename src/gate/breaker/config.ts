import { z } from 'zod';

/** The issue's figures are "a minute": fan-out and failure bursts show within one. */
export const DEFAULT_BREAKER_WINDOW_SECONDS = 60;
/** A ratio over a handful of decisions is noise (one deny of three is 33 %): judge it from ten on. */
export const DEFAULT_BREAKER_MIN_DECISIONS = 10;

const THRESHOLDS = ['side_effects', 'denied_ratio', 'delivery_failures'] as const;

const limitsShape = {
  /** The window every count of this breaker is taken over. */
  window_seconds: z.int().min(1).max(86_400).optional(),
  /** More than this many authorized intents that are not read-only (high risk) in the window trips it. */
  side_effects: z.int().min(1).optional(),
  /** More than this fraction of the window's decisions denied (0.2 = 20 %) trips it… */
  denied_ratio: z.number().gt(0).lt(1).optional(),
  /** …once at least this many were decided in the window. */
  min_decisions: z.int().min(1).optional(),
  /** More than this many failed or dead delivery attempts in the window trips it. */
  delivery_failures: z.int().min(1).optional(),
};

const needsThreshold = (v: Record<string, unknown>, ctx: z.RefinementCtx) => {
  if (!THRESHOLDS.some((k) => v[k] !== undefined))
    ctx.addIssue({ code: 'custom', path: [], message: `name at least one of ${THRESHOLDS.join(', ')}` });
};

export const breakerLimitsSchema = z.strictObject(limitsShape).superRefine(needsThreshold);
/** A named agent's override: laid over `breakers.agent`, so it may name only what differs. */
const overrideSchema = z.strictObject(limitsShape);

/**
 * `breakers:` — when an agent (a key's name) or the tenant crosses one of these in the window, the gate
 * freezes it to read-only by itself (docs/policy.md, "Breakers"). Absent: no breaker.
 */
export const breakersSchema = z
  .strictObject({
    /** Every agent, each on its own counts. */
    agent: breakerLimitsSchema.optional(),
    /** The tenant as a whole. */
    tenant: breakerLimitsSchema.optional(),
    /** Per named agent, over `agent` (or on its own when `agent` is unset). */
    agents: z.record(z.string().min(1).max(200), overrideSchema).default({}),
  })
  .superRefine((v, ctx) => {
    if (v.agent) return;
    for (const [name, o] of Object.entries(v.agents)) {
      if (!THRESHOLDS.some((k) => o[k] !== undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['agents', name],
          message: `name at least one of ${THRESHOLDS.join(', ')} (there is no breakers.agent to inherit from)`,
        });
    }
  })
  .prefault({});

export type BreakersConfig = z.output<typeof breakersSchema>;

/** One breaker with its defaults filled in. */
export interface Limits {
  window_seconds: number;
  side_effects?: number;
  denied_ratio?: number;
  min_decisions: number;
  delivery_failures?: number;
}

function resolve(l: z.output<typeof overrideSchema>): Limits {
  const { window_seconds, min_decisions, ...rest } = l;
  return {
    window_seconds: window_seconds ?? DEFAULT_BREAKER_WINDOW_SECONDS,
    min_decisions: min_decisions ?? DEFAULT_BREAKER_MIN_DECISIONS,
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
  };
}

/** The breaker of one agent: its override over `breakers.agent`; undefined when neither is set. */
export function agentLimits(cfg: BreakersConfig, agent: string): Limits | undefined {
  const own = cfg.agents[agent];
  if (!cfg.agent && !own) return undefined;
  return resolve({ ...cfg.agent, ...own });
}

export function tenantLimits(cfg: BreakersConfig): Limits | undefined {
  return cfg.tenant ? resolve(cfg.tenant) : undefined;
}

/** The longest window configured: rows older than it are pruned. */
export function longestWindowMs(cfg: BreakersConfig): number {
  const all = [cfg.agent, cfg.tenant, ...Object.values(cfg.agents)];
  const w = all.map((l) => l?.window_seconds ?? DEFAULT_BREAKER_WINDOW_SECONDS);
  return Math.max(DEFAULT_BREAKER_WINDOW_SECONDS, ...w) * 1000;
}
