import { createHash } from 'node:crypto';
import type { EnvelopeInput } from '../../envelope/index.js';
import type { SendResult } from '../../egress/index.js';
import type { Outcome } from '../retry.js';
import type { ChannelEntry } from './engine.js';
import type { Db } from '../../store/port.js';
import { type ChannelCredentialRow, selectRevokedChannels } from './sql.js';

/**
 * A channel whose credential the provider refused (issue 20 point 7, the send side of what ingress
 * does for a re-read: src/ingress/admission/revoked.ts). A dead attempt that says the credential is no
 * good marks the channel `revoked` (`channel_credentials`, migration 0202) with
 * `integration.credential.revoked` — notify alerts the owner on the priority lane through the *other*
 * channels — and from then on every delivery to it fails at once (dead, with the fix in its reason)
 * instead of being sent: a revoked token does not come back by retrying, and each refused send would
 * only repeat the refusal. Dead rows replay (`switchboard dlq replay`) once it is fixed.
 *
 * The mark is lifted (`integration.credential.restored`) when the channel's credential changes — its
 * config entry or a secret it names differs from the fingerprint kept with the mark (a restart with a
 * new token, a config reload) — or by an admin (`POST /v1/deliveries/channels/{name}/restore`).
 * Pinned by revoked.test.ts on both databases.
 */

/** Slack Web API errors that mean the token itself is no good (not a missing scope or channel). */
export const SLACK_REVOKED_ERRORS: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
]);

/**
 * Why a finished attempt says the credential is revoked, or undefined. Only a dead outcome counts (a
 * Feishu message-token code is retried with a fresh token first): an HTTP 401 from any channel
 * (Telegram's bot token, a webhook receiver's key, ntfy's token); Slack's token errors, which come in
 * a 200; Feishu app mode's token endpoint refusing the app's credentials (`feishu token code …`).
 */
export function revocationOf(type: string, outcome: Outcome, raw: SendResult): string | undefined {
  if (outcome.kind !== 'dead') return undefined;
  if (raw.status === 401) return `${type}: HTTP 401 (the provider refused the credential)`;
  if (type === 'slack') {
    const m = /^slack: ([a-z_]+)/.exec(outcome.reason);
    if (m && SLACK_REVOKED_ERRORS.has(m[1]!)) return `slack: ${m[1]}`;
  }
  if (type === 'feishu') {
    const m = /^feishu token code (\d+)/.exec(outcome.reason);
    if (m) return `feishu: the tenant token request was refused (code ${m[1]})`;
  }
  return undefined;
}

/**
 * A digest of what the channel sends with: its config entry and the value of every `*_env` it names
 * (nested ones too, e.g. Feishu's `app.app_secret_env`). Only compared, never shown; 16 bytes of
 * SHA-256 over the lot cannot be turned back into a secret.
 */
export function credentialFingerprint(
  entry: ChannelEntry,
  secret: (env: string) => string | undefined,
): string {
  const h = createHash('sha256');
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`);
    else if (typeof v === 'object' && v !== null)
      for (const k of Object.keys(v).sort()) walk((v as Record<string, unknown>)[k], `${path}.${k}`);
    else {
      h.update(`${path}=${JSON.stringify(v)}\n`);
      if (path.endsWith('_env') && typeof v === 'string') h.update(`${path}->${secret(v) ?? ''}\n`);
    }
  };
  walk(entry, '');
  return h.digest('hex').slice(0, 32);
}

/** The route that lifts a mark by hand. */
export const restoreRoute = (destination: string) =>
  `POST /v1/deliveries/channels/${encodeURIComponent(destination)}/restore`;

/** What a refused delivery's reason says: what happened, since when, and the two ways out. */
export function revokedRefusal(
  destination: string,
  mark: Pick<ChannelCredentialRow, 'reason' | 'since'>,
): string {
  return `channel ${destination} is revoked since ${new Date(Number(mark.since)).toISOString()} (${mark.reason}): replace its credential in channels.${destination} (restart or reload), or ${restoreRoute(destination)}; then switchboard dlq replay`;
}

export function revokedEvent(
  destination: string,
  channelType: string,
  reason: string,
  cause: { event_id: string; correlation_id: string; delivery_id: string },
): EnvelopeInput {
  return {
    type: 'integration.credential.revoked',
    causation_id: cause.event_id,
    correlation_id: cause.correlation_id,
    subject: { action: 'revoke', resource_ref: `channel:${destination}` },
    redacted_summary: {
      channel: destination,
      channel_type: channelType,
      reason,
      delivery_id: cause.delivery_id,
      fix: `replace the credential in channels.${destination} (restart or reload), or ${restoreRoute(destination)}`,
    },
  };
}

export function restoredEvent(
  destination: string,
  since: number | string,
  by: 'credential_changed' | { admin: string },
): EnvelopeInput {
  return {
    type: 'integration.credential.restored',
    subject: { action: 'restore', resource_ref: `channel:${destination}` },
    redacted_summary: {
      channel: destination,
      revoked_since: new Date(Number(since)).toISOString(),
      ...(by === 'credential_changed' ? { by: 'credential_changed' } : { by: 'admin', admin: by.admin }),
    },
  };
}

/** The channels marked revoked, oldest first (`switchboard doctor` reads them from the store). */
export function revokedChannels(db: Db): Promise<ChannelCredentialRow[]> {
  return db.query<ChannelCredentialRow>(selectRevokedChannels());
}
