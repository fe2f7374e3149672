import { z } from 'zod';
import { compileRoutes } from './routes.js';
import { templateProblems, templatesSchema } from './templates.js';

/**
 * The `routes:` and `notify:` sections of switchboard.yaml. Recipients live only in `channels:`; a
 * route names channels, never addresses, so no tool argument can ever pick who hears a message.
 */

/** Seed 000: a task that says more than this per minute is noise, and noise gets muted. */
export const NOTIFY_RATE_PER_MINUTE = 6;
/**
 * Alertmanager's `group_wait` default: long enough that a burst of "still running" reports folds into
 * one digest, short enough that the owner still hears about progress within the minute.
 */
export const PROGRESS_MERGE_WINDOW_SECONDS = 30;
/**
 * Alertmanager's `group_interval` order of magnitude: an agent in a loop failing the same way is
 * told once at once and then once per ten minutes, with the count, instead of every few seconds.
 */
export const FLOOD_WINDOW_SECONDS = 600;
/**
 * Thirty priority messages an hour from one task is one every two minutes: past that the phone is
 * being flooded, and every further one is recorded (`priority_cap`) rather than sent.
 */
export const PRIORITY_PER_HOUR = 30;
/** After this many failed deliveries to a route's channels, its fallback channels are used. */
export const FALLBACK_AFTER_FAILURES = 3;
/** `detail` is for a phone screen, not a log dump; channels cut further to their own caps. */
export const DETAIL_MAX_CHARS = 2000;
/**
 * A pending approval is announced once more this long before it expires: two minutes is enough to
 * unlock a phone and decide, and late enough that the reminder is not noise beside the first message.
 */
export const REANNOUNCE_BEFORE_SECONDS = 120;

/** A reply to a finished task is usually typed the same day; a day covers a night's sleep. */
export const REPLY_TTL_SECONDS = 86_400;

const channelName = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'a channel name from channels:');

export const routeSchema = z.strictObject({
  /** CEL over `stage`, `severity`, `task`, `agent`, `owner`, `kind`; must give a bool. */
  match: z.string().min(1).default('true'),
  channels: z.array(channelName).min(1, 'name at least one channel'),
  fallback: z.array(channelName).optional(),
  fallback_after: z.number().int().min(1).default(FALLBACK_AFTER_FAILURES),
});

export const routesSchema = z.array(routeSchema).default([]);

export const notifyConfigSchema = z.strictObject({
  /** Sends per task per sliding minute; 0 turns the limit off. */
  rate_per_minute: z.number().int().min(0).default(NOTIFY_RATE_PER_MINUTE),
  progress_merge_window_seconds: z.number().int().min(0).max(3600).default(PROGRESS_MERGE_WINDOW_SECONDS),
  /**
   * The same `failed`/`blocked` text from one task or session again within this window is folded:
   * the first is sent, then one digest ("failed 14× in 10 min"); 0 = every repeat is sent.
   */
  flood_window_seconds: z.number().int().min(0).max(86_400).default(FLOOD_WINDOW_SECONDS),
  /** Priority messages per task (or session) per sliding hour; past it they are suppressed and audited; 0 = no cap. */
  priority_per_hour: z.number().int().min(0).default(PRIORITY_PER_HOUR),
  /** Seed 000: "started" tells the owner nothing they did not already know. */
  send_started: z.boolean().default(false),
  /** `block`: a message with a secret is not sent at all; `mask`: the secret is replaced and it is sent. */
  secrets: z.enum(['block', 'mask']).default('block'),
  /** Hosts (and their subdomains) an artifact link or a clickable link may point at; empty = none. */
  allowed_link_domains: z.array(z.string().min(1)).default([]),
  /** Channels whose readers are outside the organisation: internal names are replaced by aliases. */
  external_channels: z.array(channelName).default([]),
  /** Internal name (repo, service, branch) → the alias shown on external channels. */
  aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
  locale: z.enum(['en', 'zh']).default('en'),
  detail_max_chars: z.number().int().min(1).max(100_000).default(DETAIL_MAX_CHARS),
  /** Lead time of the one reminder of a pending approval; 0 = no reminders. */
  reannounce_before_seconds: z.number().int().min(0).max(86_400).default(REANNOUNCE_BEFORE_SECONDS),
  /**
   * How long the "Reply" link of a done/failed/blocked message about a resumable headless task stays
   * valid (and a chat reply to it is accepted); 0 = no reply links.
   */
  reply_ttl_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .default(REPLY_TTL_SECONDS),
  /** LiquidJS overrides of title/summary/detail per channel type or channel name (templates.ts). */
  templates: templatesSchema,
});

export type RouteConfig = z.infer<typeof routeSchema>;
export type NotifyConfig = z.infer<typeof notifyConfigSchema>;

/** Problems of both sections (key path and message), for the config loader's checks. */
export function notifyConfigProblems(config: {
  routes: unknown;
  notify: unknown;
  channels?: Record<string, unknown>;
}): {
  path: string;
  message: string;
}[] {
  const problems: { path: string; message: string }[] = [];
  const routes = routesSchema.safeParse(config.routes);
  if (!routes.success) {
    for (const i of routes.error.issues)
      problems.push({ path: ['routes', ...i.path.map(String)].join('.'), message: i.message });
  }
  const notify = notifyConfigSchema.safeParse(config.notify ?? {});
  if (!notify.success) {
    for (const i of notify.error.issues)
      problems.push({ path: ['notify', ...i.path.map(String)].join('.'), message: i.message });
  }
  if (notify.success) problems.push(...templateProblems(notify.data));
  if (routes.success) {
    const compiled = compileRoutes(routes.data);
    if (!compiled.ok) problems.push(...compiled.problems);
  }
  const known = new Set(Object.keys(config.channels ?? {}));
  if (routes.success && config.channels) {
    routes.data.forEach((r, i) => {
      for (const [key, names] of [
        ['channels', r.channels],
        ['fallback', r.fallback ?? []],
      ] as const) {
        for (const n of names) {
          if (!known.has(n))
            problems.push({ path: `routes.${i}.${key}`, message: `no channel named "${n}" under channels:` });
        }
      }
    });
  }
  return problems;
}
