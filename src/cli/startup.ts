import { channelTargets, egressFix } from '../channels/targets.js';
import type { ApiKeyConfig } from '../config/schema.js';
import { checkUrlStatic, compileEgressPolicy } from '../egress/index.js';
import { keySecret } from '../kernel/auth.js';
import type { Config } from '../server/config.js';

/**
 * What `serve` says before it listens: the facts that decide whether anything will work (keys per
 * role, where notifications go and whether the egress guard lets them, what comes in, what decides),
 * so a gateway that would 401 everything or never deliver says so on its first screen.
 */

type Role = ApiKeyConfig['role'];

export interface KeyTally {
  usable: Record<Role, string[]>;
  /** Keys named in the config whose secret is missing (`key_env` unset): they authenticate nothing. */
  missing: string[];
}

export function tallyKeys(keys: readonly ApiKeyConfig[], env: NodeJS.ProcessEnv): KeyTally {
  const tally: KeyTally = { usable: { agent: [], approver: [], admin: [] }, missing: [] };
  for (const k of keys) {
    if (keySecret(k, env)) tally.usable[k.role].push(k.name);
    else tally.missing.push(`${k.name} (${missingKeyReason(k)})`);
  }
  return tally;
}

/** Why a configured key has no secret, naming what to fix. */
export function missingKeyReason(k: ApiKeyConfig): string {
  return k.key_file !== undefined
    ? `key file ${k.key_file} is missing or empty; switchboard keys rotate ${k.name} writes one`
    : `$${k.key_env} is not set`;
}

export function usableKeyCount(t: KeyTally): number {
  return t.usable.agent.length + t.usable.approver.length + t.usable.admin.length;
}

/** Why `serve` will not start with no usable key, and the ways out. */
export function noKeysMessage(t: KeyTally): string {
  const missing = t.missing.length ? ` (named but unset: ${t.missing.join(', ')})` : '';
  return `no usable API key${missing}: every /v1 request would get 401. Run \`switchboard init\` (it generates and stores keys), set the variables the config names, or pass --allow-no-keys to start anyway`;
}

export interface ChannelVerdict {
  channel: string;
  type: string;
  /** `ok`, or the guard's refusal with its reason. */
  verdict: string;
  refused: boolean;
  /** What to change, for a refusal. */
  fix?: string;
}

/** Every channel URL judged without a lookup, as the delivery engine judges it at enqueue. */
export function channelVerdicts(config: Config, env: NodeJS.ProcessEnv): ChannelVerdict[] {
  const policy = compileEgressPolicy(config.egress.allow);
  return Object.entries(config.channels).map(([channel, entry]) => {
    const type = String((entry as { type?: unknown }).type ?? '?');
    for (const t of channelTargets(entry, (k) => env[k])) {
      if (t.url === undefined)
        return { channel, type, verdict: `$${t.env} is not set`, refused: true, fix: `set $${t.env}` };
      const v = checkUrlStatic(t.url, policy);
      if (v.kind === 'blocked')
        return {
          channel,
          type,
          verdict: `refused by egress (${v.reason}: ${v.detail})`,
          refused: true,
          fix: egressFix(t.url, v.reason).replace(/^; fix: /, '') || 'point it at a public https:// URL',
        };
    }
    return { channel, type, verdict: 'egress ok', refused: false };
  });
}

/** The summary lines, one fact each; no secret (key names only, hosts never with paths). */
export function startupSummary(config: Config, env: NodeJS.ProcessEnv, url: string): string[] {
  const keys = tallyKeys(config.auth.keys, env);
  const roles = (['agent', 'approver', 'admin'] as const)
    .map(
      (r) => `${keys.usable[r].length} ${r}${keys.usable[r].length ? ` (${keys.usable[r].join(', ')})` : ''}`,
    )
    .join(', ');
  const channels = channelVerdicts(config, env);
  const sources = Object.keys(config.sources);
  const triggers = config.triggers.map((t) => t.id);
  const lines = [
    `listening  ${url}${config.server.public_url ? `, public ${config.server.public_url}` : ' (no server.public_url: approval links point here)'}`,
    `keys       ${roles}${keys.missing.length ? `; unset: ${keys.missing.join(', ')}` : ''}`,
    `channels   ${channels.length ? channels.map((c) => `${c.channel} (${c.type}, ${c.verdict})`).join(', ') : 'none'}`,
    `routes     ${config.routes.length}`,
    `sources    ${sources.length ? sources.map((n) => `${n} → POST /v1/ingress/${n}`).join(', ') : 'none'}`,
    `rules      ${config.rules.length} in the config${config.policy_files.length ? `, policy files ${config.policy_files.join(', ')}` : ''}`,
    `triggers   ${triggers.length ? triggers.join(', ') : 'none'}`,
  ];
  return lines;
}

/** One loud line per channel that can never deliver: every message to it would be recorded blocked. */
export function channelWarnings(config: Config, env: NodeJS.ProcessEnv): string[] {
  return channelVerdicts(config, env)
    .filter((c) => c.refused)
    .map(
      (c) =>
        `WARNING: channel ${c.channel} will never deliver: ${c.verdict}; every message to it is recorded blocked. Fix: ${c.fix}`,
    );
}
