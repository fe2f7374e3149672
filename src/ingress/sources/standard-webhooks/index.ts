import { createHmac } from 'node:crypto';
import { z } from 'zod';
import {
  type Accepted,
  type InboundRequest,
  type Revision,
  type Source,
  SourceConfigError,
  type SourceKind,
  type VerifyResult,
} from '../../source.js';
import { matchesAny } from '../common/compare.js';
import { bodyText, header, isRecord, parseJson, pick, reject, signedBytes } from '../common/request.js';
import { revisionOf, stampMs } from '../common/revision.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS } from '../common/timestamp.js';

// standard-webhooks spec v1 (spec/standard-webhooks.md); Svix sends the same under `svix-*` names.
const NAMES = {
  id: ['webhook-id', 'svix-id'],
  timestamp: ['webhook-timestamp', 'svix-timestamp'],
  signature: ['webhook-signature', 'svix-signature'],
} as const;
const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export const standardWebhooksConfig = z
  .strictObject({
    type: z.literal('standard-webhooks'),
    secret_env: secretEnvField.optional(),
    secret: secretLiteralField.optional(),
    /** `raw`: the secret's UTF-8 bytes are the key (the JS library's `format: "raw"`), for senders that do not base64. */
    secret_format: z.enum(['base64', 'raw']).default('base64'),
    tolerance_seconds: z.number().int().min(1).max(MAX_TOLERANCE_SECONDS).default(DEFAULT_TOLERANCE_SECONDS),
  })
  .superRefine((v, ctx) => checkSecretPair(v, ctx, 'secret'));

export type StandardWebhooksConfig = z.infer<typeof standardWebhooksConfig>;

/** The HMAC key of a `whsec_…` (or bare) secret: the base64-decoded bytes, never the ASCII text. */
export function standardWebhooksKey(secret: string, format: 'base64' | 'raw' = 'base64'): Buffer {
  if (format === 'raw') return Buffer.from(secret, 'utf8');
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!BASE64.test(encoded)) {
    throw new SourceConfigError(
      'standard-webhooks secret is not base64 after "whsec_" (set secret_format: raw)',
    );
  }
  return Buffer.from(encoded, 'base64');
}

function first(req: InboundRequest, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = header(req, name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * Verifies `v1` (HMAC-SHA256) entries of the space-separated signature list, accepting the request
 * if any entry matches any key: a sender mid-rotation signs with both its old and new secret.
 * Other versions (`v1a`, ed25519) are skipped, as the reference libraries do.
 */
export function verifyStandardWebhook(
  req: InboundRequest,
  keys: readonly Buffer[],
  toleranceSeconds: number,
): VerifyResult {
  const signature = first(req, NAMES.signature);
  if (signature === undefined) return reject('missing_signature', 'webhook-signature is required');
  const id = first(req, NAMES.id);
  if (id === undefined) return reject('missing_id', 'webhook-id is required');
  const timestamp = first(req, NAMES.timestamp);
  if (timestamp === undefined) return reject('missing_timestamp', 'webhook-timestamp is required');

  const fresh = checkTimestamp(timestamp, 'webhook-timestamp', req.now, toleranceSeconds);
  if (!fresh.ok) return fresh.rejected;

  const content = signedBytes(`${id}.${timestamp}.`, req.body);
  const expected = keys.map((key) => createHmac('sha256', key).update(content).digest('base64'));
  const v1 = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  if (v1.length === 0) {
    return reject('bad_signature', 'webhook-signature has no "v1,<base64>" entry (v1a is not supported)');
  }
  // Compared as base64 text, so a re-encoding with different padding bits does not pass.
  if (!v1.some((candidate) => matchesAny(candidate, expected))) {
    return reject('bad_signature', 'no webhook-signature entry matches');
  }

  const parsed = parseJson(bodyText(req.body));
  if (!parsed.ok) return parsed.rejected;
  const type = isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : null;
  return { kind: 'ok', deliveryId: id, eventName: type, timestamp: fresh.ms, payload: parsed.value };
}

/**
 * A Standard Webhooks payload is `{ type, timestamp, data }`: the resource is `data.id`, its revision
 * the payload's `timestamp` (when the event happened), else the signed `webhook-timestamp` (when it
 * was sent; a sender that re-signs retries makes that later, so the payload's own is preferred).
 */
export function standardWebhooksRevision(accepted: Accepted): Revision | undefined {
  const p = accepted.payload;
  const at = stampMs(pick(p, 'timestamp')) ?? accepted.timestamp;
  return revisionOf(pick(p, 'data', 'id'), at);
}

export const standardWebhooks: SourceKind<StandardWebhooksConfig> = {
  type: 'standard-webhooks',
  configSchema: standardWebhooksConfig,
  create(config, lookup): Source {
    const secrets = resolveSecrets(config.secret_env, config.secret, lookup, 'standard-webhooks secret');
    const keys = secrets.map((s) => standardWebhooksKey(s, config.secret_format));
    return {
      type: 'standard-webhooks',
      verify: (req) => verifyStandardWebhook(req, keys, config.tolerance_seconds),
      // The sender is one configured partner: the source name is the binding.
      tenantBinding: () => ({}),
      revision: standardWebhooksRevision,
    };
  },
};
