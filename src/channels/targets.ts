import { type Blocked, checkUrl, checkUrlStatic, type EgressPolicy } from '../egress/index.js';

/**
 * The URLs a channel entry will post to, read from its config as data: every `url` / `*_url` key holds
 * one, every `url_env` / `*_url_env` key names the environment variable that holds one (webhook URLs
 * with their token inside: Discord, Slack, Feishu, DingTalk, WeCom). Nested keys count (`app.base_url`).
 * Kinds never have to list their own: a new kind with a `url` key is checked like the others. Where a
 * kind posts to a built-in API (`api.telegram.org`), that constant is https and public, so it is not
 * listed. The email channel's SMTP `host` is not a URL; `resolveHost` judges it at connect time.
 */

export interface ChannelTarget {
  /** The key path inside the entry (`url`, `url_env`, `app.base_url`). */
  key: string;
  /** The environment variable it came from, for a `*_env` key. */
  env?: string;
  /** The URL; undefined when the environment variable is not set (the attempt reports that). */
  url: string | undefined;
}

const isUrlKey = (k: string) => k === 'url' || k.endsWith('_url');
const isUrlEnvKey = (k: string) => k === 'url_env' || k.endsWith('_url_env');

export function channelTargets(
  entry: Readonly<Record<string, unknown>>,
  secret: (env: string) => string | undefined,
): ChannelTarget[] {
  const out: ChannelTarget[] = [];
  const walk = (obj: Readonly<Record<string, unknown>>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (typeof v === 'string' && isUrlKey(k)) out.push({ key, url: v });
      else if (typeof v === 'string' && isUrlEnvKey(k)) {
        const value = secret(v);
        out.push({ key, env: v, url: value === '' ? undefined : value });
      } else if (typeof v === 'object' && v !== null && !Array.isArray(v))
        walk(v as Record<string, unknown>, key);
    }
  };
  walk(entry, '');
  return out;
}

export interface BlockedTarget {
  target: ChannelTarget;
  blocked: Blocked;
}

/**
 * The first of a channel's URLs the egress policy refuses without a lookup (scheme, user info, port,
 * plain HTTP, metadata, a private literal), or undefined. The delivery engine asks it at enqueue; the
 * start-up warning asks it for every channel. An unset variable is not judged here: the attempt
 * reports it as the config problem it is.
 */
export function blockedTarget(
  entry: Readonly<Record<string, unknown>>,
  secret: (env: string) => string | undefined,
  policy: EgressPolicy,
): BlockedTarget | undefined {
  for (const target of channelTargets(entry, secret)) {
    if (target.url === undefined) continue;
    const blocked = staticVerdict(target.url, policy);
    if (blocked) return { target, blocked };
  }
  return undefined;
}

/**
 * The static verdict depends on the URL and the (read-only) policy alone, and a delivery engine asks
 * it for the same few channel URLs at every enqueue: each policy remembers its verdicts. The URLs come
 * from the config and the environment, so the map stays small; past the cap it is not added to.
 */
const VERDICTS_MAX = 1024;
const verdicts = new WeakMap<EgressPolicy, Map<string, Blocked | null>>();

function staticVerdict(url: string, policy: EgressPolicy): Blocked | undefined {
  let known = verdicts.get(policy);
  if (!known) {
    known = new Map();
    verdicts.set(policy, known);
  }
  let v = known.get(url);
  if (v === undefined) {
    const check = checkUrlStatic(url, policy);
    v = check.kind === 'blocked' ? check : null;
    if (known.size < VERDICTS_MAX) known.set(url, v);
  }
  return v ?? undefined;
}

export interface TargetFinding {
  level: 'ok' | 'warn' | 'fail';
  channel: string;
  message: string;
}

/**
 * `switchboard doctor`'s view of every channel URL: the full check, DNS included. A refused URL is a
 * failure; an unset variable or a name that does not resolve right now is a warning (the network or
 * the environment of the doctor's shell may differ from the server's). Messages name keys and hosts,
 * never a URL's path or query: webhook URLs carry their token there.
 */
export async function judgeChannelUrls(
  channels: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  secret: (env: string) => string | undefined,
  policy: EgressPolicy,
): Promise<TargetFinding[]> {
  const out: TargetFinding[] = [];
  for (const [channel, entry] of Object.entries(channels)) {
    for (const t of channelTargets(entry, secret)) {
      const where = `channels.${channel}.${t.key}${t.env ? ` ($${t.env})` : ''}`;
      if (t.url === undefined) {
        out.push({ level: 'warn', channel, message: `${where}: $${t.env} is not set` });
        continue;
      }
      const v = await checkUrl(t.url, policy);
      if (v.kind === 'allowed') out.push({ level: 'ok', channel, message: `${where}: ${v.host} allowed` });
      else
        out.push({
          level: v.reason === 'unresolvable' ? 'warn' : 'fail',
          channel,
          message: `${where}: refused by the egress guard (${v.reason}: ${v.detail})${egressFix(t.url, v.reason)}`,
        });
    }
  }
  return out;
}

/**
 * How to let a refused URL through on purpose, for the reasons `egress.allow` can lift (a LAN or
 * loopback host, plain HTTP, a port); nothing for metadata or a malformed URL, which stay refused.
 */
export function egressFix(url: string, reason: string): string {
  if (!['https_required', 'private_address', 'port'].includes(reason)) return '';
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return '';
  }
  return `; fix: use its https:// address, or if this host is yours (a LAN or loopback server) add "${host}" to egress.allow`;
}
