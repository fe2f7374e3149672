import { z } from 'zod';
import { outboundUrl } from '../../egress/index.js';
import { commandActionSchema } from '../../tasks/config.js';
import { fetchSchema } from './fetch.js';

/** `10s`, `5m`, `1h`, `250ms`: a window written the way people say it. */
const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Milliseconds of a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** A debounce window longer than a day is a misconfiguration: runs would never start. */
const MAX_WINDOW_MS = 24 * 3_600_000;

const duration = z.string().refine((s) => {
  const ms = parseDuration(s);
  return ms !== undefined && ms > 0 && ms <= MAX_WINDOW_MS;
}, 'a duration such as 10s, 5m or 1h (more than 0, at most 24h)');

const httpAction = z.strictObject({
  type: z.literal('http'),
  url: outboundUrl,
  headers: z.record(z.string(), z.string()).optional(),
  body_template: z.unknown().optional(),
});

const notifyAction = z.strictObject({
  type: z.literal('notify'),
  channels: z.array(z.string().min(1)).optional(),
});

export const triggerSchema = z.strictObject({
  /** Stable: budgets, coalescing state and events are keyed by it. */
  id: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'trigger ids are lower-case letters, digits, ., - and _'),
  /** The name of a configured source (`sources.<name>`). */
  source: z.string().min(1),
  /** CEL over `event`, `payload` and `source`; must give a bool. Absent: every delivery of the source. */
  when: z.string().min(1).optional(),
  coalesce: z
    .strictObject({
      /** CEL that gives a string, e.g. `payload.repository.full_name + "#" + string(payload.number)`. */
      key: z.string().min(1),
      window: duration,
    })
    .optional(),
  budget: z
    .strictObject({
      per_day: z.number().int().min(1).optional(),
      concurrent: z.number().int().min(1).optional(),
    })
    .optional(),
  /** Re-read the authoritative object (the PR from the GitHub API) before coalescing; CEL sees it as `fetched`. */
  fetch: fetchSchema.optional(),
  /** CEL over `event`, `payload`, `source` and `fetched`; false drops the delivery as `stale` (e.g. `fetched.state == "open"`). */
  when_fetched: z.string().min(1).optional(),
  /** Free text shown as the task's title prefix. */
  title: z.string().min(1).max(200).optional(),
  owner: z.string().min(1).optional(),
  action: z.discriminatedUnion('type', [commandActionSchema, httpAction, notifyAction]),
});

export const triggersSchema = z.array(triggerSchema).superRefine((list, ctx) => {
  const seen = new Set<string>();
  list.forEach((t, i) => {
    if (t.when_fetched !== undefined && t.fetch === undefined)
      ctx.addIssue({ code: 'custom', path: [i, 'when_fetched'], message: 'when_fetched needs fetch' });
    if (seen.has(t.id))
      ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate trigger id ${t.id}` });
    seen.add(t.id);
  });
});

export type TriggerConfig = z.infer<typeof triggerSchema>;
export type TriggerAction = TriggerConfig['action'];

/**
 * Three hops of automation (a webhook wakes an agent, whose comment wakes another, whose comment wakes a
 * third) covers every legitimate chain we know of (review → fix → re-review); past it, two agents
 * answering each other is far likelier than useful work, so work derived beyond it is refused.
 */
export const DEFAULT_MAX_DEPTH = 3;

/**
 * Every automated step is a hop (a webhook's task is hop 1, a delegation or a relaunch one more), and a
 * chain of them can grow without growing deeper (agents fanning work to each other). Ten is more than
 * three times the depth limit: it stops only the chains the depth count misses.
 */
export const DEFAULT_MAX_HOPS = 10;

export const loopSchema = z.strictObject({
  /** Logins (GitHub `sender.login`, Slack user ids) whose events never start work: our own bots. */
  bot_logins: z.array(z.string().min(1)).default([]),
  max_depth: z.number().int().min(1).max(20).default(DEFAULT_MAX_DEPTH),
  /** Work derived from an event that already travelled this many hops is refused (`hop_limit`). */
  max_hops: z.number().int().min(1).max(100).default(DEFAULT_MAX_HOPS),
  /**
   * The last line against a runaway: automated runs one tenant may start per UTC day, across all its
   * triggers. Unset means no tenant-wide cap (each trigger's `budget.per_day` still applies).
   */
  tenant_runs_per_day: z.number().int().min(1).optional(),
});

export type LoopConfig = z.infer<typeof loopSchema>;
