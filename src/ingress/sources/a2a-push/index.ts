import { createHash } from 'node:crypto';
import type { createLocalJWKSet, JSONWebKeySet } from 'jose';

/** jose loads with the first JWT checked, not at start (docs/ARCHITECTURE.md "Idle memory"). */
const jose = () => import('jose');
import { z } from 'zod';
import type { Egress } from '../../../egress/index.js';
import { outboundUrl } from '../../../egress/index.js';
import { type Source, SourceConfigError, type SourceKind, type VerifyResult } from '../../source.js';
import { matchesAny } from '../common/compare.js';
import { bearer } from '../../../kernel/auth.js';
import { bodyText, header, isRecord, parseJson, reject } from '../common/request.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';

/** The four payloads of a v1.0 `StreamResponse`; the one present is the event's name. */
const PAYLOADS = ['task', 'message', 'statusUpdate', 'artifactUpdate'] as const;
/** A push JWT older than this is refused whatever its `exp` (Switchboard signs for five minutes). */
const MAX_TOKEN_AGE_SECONDS = 600;
/** An unknown `kid` refetches the JWKS at most this often, so a forged kid cannot make us hammer it. */
const REFETCH_MIN_MS = 30_000;

export const a2aPushConfig = z
  .strictObject({
    type: z.literal('a2a-push'),
    /** The sender's JWKS (Switchboard serves it at `/.well-known/jwks.json`); fetched through egress. */
    jwks_url: outboundUrl.optional(),
    /** `aud` the JWT must carry: this receiver's URL as the sender was given it. */
    audience: z.string().min(1).optional(),
    /** `iss` the JWT must carry (optional). */
    issuer: z.string().min(1).optional(),
    /** Or a shared token, compared in constant time with `X-A2A-Notification-Token` (or a Bearer). */
    token_env: secretEnvField.optional(),
    token: secretLiteralField.optional(),
    /** Clock skew allowed on `exp` and `iat`. */
    max_skew_seconds: z.number().int().min(0).max(300).default(60),
    /** How long a fetched JWKS is trusted before it is fetched again. */
    jwks_cache_seconds: z.number().int().min(1).max(86_400).default(300),
  })
  .superRefine((v, ctx) => {
    const jwt = v.jwks_url !== undefined;
    const token = v.token !== undefined || v.token_env !== undefined;
    if (jwt === token)
      ctx.addIssue({ code: 'custom', message: 'set either jwks_url (with audience) or token_env / token' });
    if (jwt && !v.audience)
      ctx.addIssue({ code: 'custom', path: ['audience'], message: 'required with jwks_url' });
    if (token) checkSecretPair(v, ctx, 'token');
  });

export type A2APushConfig = z.infer<typeof a2aPushConfig>;

/** What the kind needs besides its config: egress, for the JWKS. */
export interface A2APushDeps {
  egress?: Pick<Egress, 'send'>;
}

/** The JWKS of one sender, cached, refetched on expiry or an unknown `kid` (a rotation). */
class JwksCache {
  private keys: { set: ReturnType<typeof createLocalJWKSet>; kids: Set<string>; at: number } | undefined;
  private lastFetch = -Infinity;

  constructor(
    private readonly url: string,
    private readonly ttlMs: number,
    private readonly egress: Pick<Egress, 'send'>,
  ) {}

  async forKid(kid: string | undefined, now: number) {
    const stale = !this.keys || now - this.keys.at > this.ttlMs;
    const unknown = kid !== undefined && !this.keys?.kids.has(kid);
    if ((stale || unknown) && (stale || now - this.lastFetch >= REFETCH_MIN_MS)) await this.fetch(now);
    return this.keys?.set;
  }

  private async fetch(now: number): Promise<void> {
    this.lastFetch = now;
    const r = await this.egress.send({
      url: this.url,
      method: 'GET',
      headers: { accept: 'application/json' },
    });
    if (r.status !== 200 || !r.body) return;
    const jwks = JSON.parse(r.body) as JSONWebKeySet;
    if (!Array.isArray(jwks.keys)) return;
    const { createLocalJWKSet } = await jose();
    this.keys = {
      set: createLocalJWKSet(jwks),
      kids: new Set(jwks.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string')),
      at: now,
    };
  }
}

/**
 * The event's id, the same on the sender's retries: the JWT's `jti` (Switchboard's event id) or
 * Switchboard's header, else the task and what changed (state, artifact), so a duplicate push of the
 * same state is dropped even from a sender without ids.
 */
function deliveryIdOf(
  name: string,
  value: Record<string, unknown>,
  jti: string | undefined,
  eventId: string | undefined,
): string {
  if (jti) return jti;
  if (eventId) return eventId;
  const status = isRecord(value.status) ? String(value.status.state ?? '') : '';
  if (name === 'statusUpdate') return `${String(value.taskId)}:${status}`;
  if (name === 'task') return `${String(value.id)}:${status}`;
  if (name === 'artifactUpdate') {
    const artifact = isRecord(value.artifact) ? String(value.artifact.artifactId ?? '') : '';
    return `${String(value.taskId)}:artifact:${artifact}`;
  }
  return `message:${String(value.messageId)}`;
}

function readStreamResponse(
  body: Uint8Array,
  jti: string | undefined,
  eventId: string | undefined,
): VerifyResult {
  const parsed = parseJson(bodyText(body));
  if (!parsed.ok) return parsed.rejected;
  const v = parsed.value;
  const present = isRecord(v) ? PAYLOADS.filter((k) => isRecord(v[k])) : [];
  if (!isRecord(v) || present.length !== 1)
    return reject(
      'malformed',
      'the body is not an A2A StreamResponse (exactly one of task, message, statusUpdate, artifactUpdate)',
    );
  const name = present[0]!;
  return {
    kind: 'ok',
    deliveryId: deliveryIdOf(name, v[name] as Record<string, unknown>, jti, eventId),
    eventName: name,
    payload: v,
  };
}

async function verifyJwt(
  req: Parameters<Source['verify']>[0],
  config: A2APushConfig,
  jwks: JwksCache,
): Promise<VerifyResult> {
  const token = bearer(header(req, 'authorization'));
  if (!token) return reject('missing_signature', 'Authorization: Bearer <JWT> is required');
  const { decodeProtectedHeader, errors, jwtVerify } = await jose();
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return reject('bad_signature', 'the bearer token is not a JWT');
  }
  const keys = await jwks.forKid(kid, req.now);
  if (!keys) return reject('bad_signature', 'the sender JWKS could not be fetched');
  const skew = config.max_skew_seconds;
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      audience: config.audience!,
      ...(config.issuer ? { issuer: config.issuer } : {}),
      clockTolerance: skew,
      maxTokenAge: MAX_TOKEN_AGE_SECONDS,
      currentDate: new Date(req.now),
      requiredClaims: ['exp', 'iat'],
    }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) return reject('timestamp_too_old', 'the JWT has expired');
    if (err instanceof errors.JWTClaimValidationFailed)
      return reject('bad_signature', `the JWT claim ${err.claim} is not valid (${err.reason})`);
    return reject('bad_signature', 'the JWT signature does not verify against the sender JWKS');
  }
  if (typeof payload.iat === 'number' && payload.iat * 1000 > req.now + skew * 1000)
    return reject('timestamp_in_future', 'the JWT iat is in the future');
  const digest = payload.body_sha256;
  if (digest !== undefined && digest !== createHash('sha256').update(req.body).digest('hex'))
    return reject('bad_signature', 'body_sha256 does not match the body');
  return readStreamResponse(req.body, typeof payload.jti === 'string' ? payload.jti : undefined, undefined);
}

export const a2aPush: SourceKind<A2APushConfig, A2APushDeps> = {
  type: 'a2a-push',
  configSchema: a2aPushConfig,
  create(config, lookup, deps = {}): Source {
    const binding = () => ({});
    if (config.jwks_url) {
      if (!deps.egress)
        throw new SourceConfigError('a2a-push with jwks_url needs the egress guard to fetch the JWKS');
      const jwks = new JwksCache(config.jwks_url, config.jwks_cache_seconds * 1000, deps.egress);
      return {
        type: 'a2a-push',
        // The JWT is checked with WebCrypto against a JWKS that may need fetching: only `verifyAsync` can.
        verify: () => reject('bad_signature', 'an a2a-push source with jwks_url verifies asynchronously'),
        verifyAsync: (req) => verifyJwt(req, config, jwks),
        tenantBinding: binding,
      };
    }
    const tokens = resolveSecrets(config.token_env, config.token, lookup, 'a2a-push token');
    return {
      type: 'a2a-push',
      verify(req) {
        const sent = header(req, 'x-a2a-notification-token') ?? bearer(header(req, 'authorization'));
        if (sent === undefined) return reject('missing_signature', 'X-A2A-Notification-Token is required');
        if (!matchesAny(sent, tokens))
          return reject('bad_signature', 'the notification token does not match');
        return readStreamResponse(req.body, undefined, header(req, 'x-switchboard-event-id'));
      },
      tenantBinding: binding,
    };
  },
};
