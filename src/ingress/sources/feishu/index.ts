import { z } from 'zod';
import type { InboundRequest, Source, SourceKind, VerifyResult } from '../../source.js';
import { matchesAny, safeEqual } from '../common/compare.js';
import { bindings, bodyText, header, isRecord, parseJson, pick, reject } from '../common/request.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS } from '../common/timestamp.js';
import { larkDecrypt, larkSignature } from './crypto.js';

const SIGNATURE = 'x-lark-signature';
const TIMESTAMP = 'x-lark-request-timestamp';
const NONCE = 'x-lark-request-nonce';

export const feishuConfig = z
  .strictObject({
    type: z.literal('feishu'),
    /** "Verification Token" of the app's event subscription: checked in every body, and the challenge. */
    verification_token_env: secretEnvField.optional(),
    verification_token: secretLiteralField.optional(),
    /** "Encrypt Key": when set, Feishu encrypts bodies and signs requests, and both are required. */
    encrypt_key_env: secretEnvField.optional(),
    encrypt_key: secretLiteralField.optional(),
    /** The official SDKs check no freshness; five minutes like the other schemes (docs/ingress-sources.md). */
    tolerance_seconds: z.number().int().min(1).max(MAX_TOLERANCE_SECONDS).default(DEFAULT_TOLERANCE_SECONDS),
  })
  .superRefine((v, ctx) => {
    checkSecretPair(v, ctx, 'verification_token');
    checkSecretPair(v, ctx, 'encrypt_key', false);
  });

export type FeishuConfig = z.infer<typeof feishuConfig>;

interface FeishuSecrets {
  tokens: readonly string[];
  encryptKeys: readonly string[];
  toleranceSeconds: number;
}

type Opened = { ok: true; payload: unknown } | { ok: false; result: VerifyResult };

/** Parses the body and, if it is `{"encrypt": …}`, decrypts it with the first key that opens it. */
function open(req: InboundRequest, keys: readonly string[], signed: boolean): Opened {
  const outer = parseJson(bodyText(req.body));
  if (!outer.ok) return { ok: false, result: outer.rejected };
  if (!isRecord(outer.value) || typeof outer.value.encrypt !== 'string')
    return { ok: true, payload: outer.value };
  if (keys.length === 0) {
    return {
      ok: false,
      result: reject('malformed', 'the body is encrypted but no encrypt_key is configured'),
    };
  }
  for (const key of keys) {
    try {
      const inner = parseJson(larkDecrypt(outer.value.encrypt, key), 'decrypted body');
      if (inner.ok) return { ok: true, payload: inner.value };
    } catch {
      // Wrong key or damaged ciphertext: try the next key.
    }
  }
  // Unsigned, failing to decrypt means the sender does not hold the key; signed, the content is broken.
  return signed
    ? { ok: false, result: reject('malformed', 'the encrypted body does not decrypt to JSON') }
    : {
        ok: false,
        result: reject('bad_signature', 'the body does not decrypt with the configured encrypt_key'),
      };
}

/**
 * Feishu/Lark event callbacks (schema 2.0 and 1.0) and the URL challenge. With an encrypt key,
 * every event must carry a valid `X-Lark-Signature` over the raw body. The challenge is the one
 * request Feishu does not sign (its Go SDK skips the check for it), so it is answered only when
 * the verification token inside the (decrypted) body matches.
 */
export function verifyFeishu(req: InboundRequest, s: FeishuSecrets): VerifyResult {
  let keys = s.encryptKeys;
  let signedAt: number | undefined;
  const signature = header(req, SIGNATURE);
  if (keys.length > 0 && signature !== undefined) {
    const timestamp = header(req, TIMESTAMP);
    if (timestamp === undefined) return reject('missing_timestamp', 'X-Lark-Request-Timestamp is required');
    const fresh = checkTimestamp(timestamp, 'X-Lark-Request-Timestamp', req.now, s.toleranceSeconds);
    if (!fresh.ok) return fresh.rejected;
    const nonce = header(req, NONCE) ?? '';
    const received = signature.toLowerCase();
    keys = keys.filter((key) => safeEqual(received, larkSignature(timestamp, nonce, key, req.body)));
    if (keys.length === 0) return reject('bad_signature', 'X-Lark-Signature does not match the body');
    signedAt = fresh.ms;
  }

  const opened = open(req, keys, signedAt !== undefined);
  if (!opened.ok) return opened.result;
  const payload = opened.payload;
  if (!isRecord(payload)) return reject('malformed', 'the body is not an object');

  const v2 = payload.schema === '2.0';
  const token = (v2 ? pick(payload, 'header', 'token') : pick(payload, 'token')) ?? '';
  const tokenOk = matchesAny(token, s.tokens);

  if (payload.type === 'url_verification') {
    if (!tokenOk) return reject('bad_signature', 'the challenge carries the wrong verification token');
    return {
      kind: 'challenge',
      response: { status: 200, body: { challenge: payload.challenge }, contentType: 'application/json' },
    };
  }
  if (s.encryptKeys.length > 0 && signedAt === undefined) {
    return reject('missing_signature', 'X-Lark-Signature is required when an encrypt_key is configured');
  }
  if (!tokenOk) return reject('bad_signature', 'the verification token in the body does not match');

  const deliveryId = pick(payload, 'header', 'event_id') ?? pick(payload, 'uuid');
  if (deliveryId === undefined) return reject('malformed', 'the event has no header.event_id (or uuid)');
  const eventName = pick(payload, 'header', 'event_type') ?? pick(payload, 'event', 'type') ?? null;
  return {
    kind: 'ok',
    deliveryId,
    eventName,
    ...(signedAt === undefined ? {} : { timestamp: signedAt }),
    payload,
  };
}

export function feishuBinding(payload: unknown): Record<string, string> {
  return bindings({
    tenant_key:
      pick(payload, 'header', 'tenant_key') ??
      pick(payload, 'tenant_key') ??
      pick(payload, 'event', 'tenant_key'),
    app_id: pick(payload, 'header', 'app_id') ?? pick(payload, 'event', 'app_id'),
  });
}

export const feishu: SourceKind<FeishuConfig> = {
  type: 'feishu',
  configSchema: feishuConfig,
  create(config, lookup): Source {
    const secrets: FeishuSecrets = {
      tokens: resolveSecrets(
        config.verification_token_env,
        config.verification_token,
        lookup,
        'feishu verification_token',
      ),
      encryptKeys: resolveSecrets(config.encrypt_key_env, config.encrypt_key, lookup, 'feishu encrypt_key'),
      toleranceSeconds: config.tolerance_seconds,
    };
    return { type: 'feishu', verify: (req) => verifyFeishu(req, secrets), tenantBinding: feishuBinding };
  },
};
