import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { InboundRequest, Source, SourceKind, VerifyResult } from '../../source.js';
import { matchesAny } from '../common/compare.js';
import { bodyText, contentId, header, isRecord, parseJson, reject, signedBytes } from '../common/request.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS } from '../common/timestamp.js';

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name')
  .transform((s) => s.toLowerCase());

const PLACEHOLDER = /\{(body|timestamp|id)\}/g;

export const hmacConfig = z
  .strictObject({
    type: z.literal('hmac'),
    secret_env: secretEnvField.optional(),
    secret: secretLiteralField.optional(),
    /** The header carrying the signature, e.g. `X-Signature`. */
    header: headerName,
    algorithm: z.enum(['sha1', 'sha256', 'sha512']).default('sha256'),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    /** Text before the encoded signature in the header, e.g. `sha256=`. */
    prefix: z.string().max(32).default(''),
    /** The header carrying the sender's delivery id; without one, a digest of the signed bytes is the id. */
    id_header: headerName.optional(),
    /** The header naming the event, if the sender sends one; else the body's `type`. */
    event_header: headerName.optional(),
    /** The header carrying a signed timestamp; it must then appear in `signed_payload`. */
    timestamp_header: headerName.optional(),
    timestamp_unit: z.enum(['s', 'ms']).default('s'),
    tolerance_seconds: z.number().int().min(1).max(MAX_TOLERANCE_SECONDS).default(DEFAULT_TOLERANCE_SECONDS),
    /** What is signed: `{body}` (raw bytes), `{timestamp}` and `{id}` (header values), e.g. `{timestamp}.{body}`. */
    signed_payload: z.string().max(200).default('{body}'),
  })
  .superRefine((v, ctx) => {
    checkSecretPair(v, ctx, 'secret');
    const uses = (name: string) => v.signed_payload.includes(`{${name}}`);
    if (v.signed_payload.split('{body}').length !== 2) {
      ctx.addIssue({ code: 'custom', path: ['signed_payload'], message: 'must contain {body} exactly once' });
    }
    if (uses('timestamp') !== (v.timestamp_header !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['signed_payload'],
        message: 'timestamp_header and {timestamp} go together: an unsigned timestamp proves nothing',
      });
    }
    if (uses('id') && v.id_header === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['id_header'],
        message: 'required when signed_payload uses {id}',
      });
    }
  });

export type HmacConfig = z.infer<typeof hmacConfig>;

/** The template with header values in place and the raw body bytes where `{body}` stands. */
function signedContent(
  template: string,
  body: Uint8Array,
  values: { timestamp?: string; id?: string },
): Buffer {
  const [before = '', after = ''] = template.split('{body}');
  const fill = (part: string) =>
    part.replace(PLACEHOLDER, (_, name: 'timestamp' | 'id') => values[name] ?? '');
  return signedBytes(fill(before), body, fill(after));
}

/** A generic HMAC scheme for senders without a kind of their own; every part is configuration. */
export function verifyHmac(
  req: InboundRequest,
  config: HmacConfig,
  secrets: readonly string[],
): VerifyResult {
  const signature = header(req, config.header);
  if (signature === undefined) return reject('missing_signature', `${config.header} is required`);
  const id = config.id_header === undefined ? undefined : header(req, config.id_header);
  if (config.id_header !== undefined && id === undefined) {
    return reject('missing_id', `${config.id_header} is required`);
  }
  let timestamp: string | undefined;
  let timestampMs: number | undefined;
  if (config.timestamp_header !== undefined) {
    timestamp = header(req, config.timestamp_header);
    if (timestamp === undefined) return reject('missing_timestamp', `${config.timestamp_header} is required`);
    const fresh = checkTimestamp(
      timestamp,
      config.timestamp_header,
      req.now,
      config.tolerance_seconds,
      config.timestamp_unit,
    );
    if (!fresh.ok) return fresh.rejected;
    timestampMs = fresh.ms;
  }
  if (!signature.startsWith(config.prefix)) {
    return reject('bad_signature', `${config.header} must start with "${config.prefix}"`);
  }

  const content = signedContent(config.signed_payload, req.body, { timestamp, id });
  const expected = secrets.map((s) =>
    createHmac(config.algorithm, s).update(content).digest(config.encoding),
  );
  const received = signature.slice(config.prefix.length);
  if (!matchesAny(config.encoding === 'hex' ? received.toLowerCase() : received, expected)) {
    return reject('bad_signature', `${config.header} does not match`);
  }

  const parsed = parseJson(bodyText(req.body));
  if (!parsed.ok) return parsed.rejected;
  const fromBody = isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : null;
  const eventName = (config.event_header && header(req, config.event_header)) || fromBody;
  return {
    kind: 'ok',
    deliveryId: id ?? contentId(content),
    eventName,
    ...(timestampMs === undefined ? {} : { timestamp: timestampMs }),
    payload: parsed.value,
  };
}

export const hmac: SourceKind<HmacConfig> = {
  type: 'hmac',
  configSchema: hmacConfig,
  create(config, lookup): Source {
    const secrets = resolveSecrets(config.secret_env, config.secret, lookup, 'hmac secret');
    return { type: 'hmac', verify: (req) => verifyHmac(req, config, secrets), tenantBinding: () => ({}) };
  },
};
