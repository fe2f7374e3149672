import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (symmetric `v1`): HMAC-SHA256 over `${id}.${timestamp}.${body}` keyed by
 * the base64-decoded secret, sent as `webhook-signature: v1,<base64>`; with several secrets (key
 * rotation) one entry per secret, space-separated, so receivers on the old and the new key both
 * verify. Checked against the `standardwebhooks` reference library and the published vector in
 * `sign.test.ts`. Formatting only: sending is `send.ts`.
 */

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export interface SignInput {
  /** The message id, stable across retries so receivers de-duplicate on it (e.g. the event id). */
  id: string;
  /** Unix time in whole seconds (see `webhookTimestamp`). */
  timestamp: number;
  /** The exact bytes that are sent. */
  body: string | Uint8Array;
  /** `whsec_<base64>` or bare base64; several during rotation. */
  secrets: readonly string[];
}

/** The spec: "random, 24 to 64 bytes"; a shorter key is refused rather than silently weak. */
export const MIN_SECRET_BYTES = 24;

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
/** No full stop (it separates the signed parts) and nothing that could break a header line. */
const ID_PATTERN = /^[\x21-\x2d\x2f-\x7e]{1,256}$/;

/**
 * Decodes a secret into its HMAC key. Throws a TypeError that never contains the secret itself;
 * the config loader calls this at start-up so a bad secret stops the gateway, not a delivery.
 */
export function parseWebhookSecret(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new TypeError('webhook secret is not "whsec_" followed by base64');
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES) {
    throw new TypeError(`webhook secret decodes to ${key.length} bytes; Standard Webhooks asks for 24 to 64`);
  }
  return key;
}

/** A fresh secret in the `whsec_` form, for `switchboard init` and tests. */
export function generateWebhookSecret(bytes = 32): string {
  return SECRET_PREFIX + randomBytes(bytes).toString('base64');
}

/** Unix seconds from epoch milliseconds, as the header wants. */
export function webhookTimestamp(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

/** Signs with keys already decoded by `parseWebhookSecret` (the hot path: decode once at start-up). */
export function signWebhookWithKeys(
  input: Omit<SignInput, 'secrets'> & { keys: readonly Buffer[] },
): WebhookHeaders {
  if (!ID_PATTERN.test(input.id))
    throw new TypeError('webhook id must be 1-256 visible ASCII characters without "."');
  // Above 1e11 seconds is the year 5138: the caller passed milliseconds.
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp <= 0 || input.timestamp >= 1e11) {
    throw new TypeError('webhook timestamp must be whole Unix seconds');
  }
  if (input.keys.length === 0) throw new TypeError('at least one webhook secret is needed');
  const prefix = `${input.id}.${input.timestamp}.`;
  const signatures = input.keys.map((key) => {
    const mac = createHmac('sha256', key).update(prefix);
    mac.update(typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body);
    return `v1,${mac.digest('base64')}`;
  });
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

export function signWebhook(input: SignInput): WebhookHeaders {
  return signWebhookWithKeys({ ...input, keys: input.secrets.map(parseWebhookSecret) });
}
