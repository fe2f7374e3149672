import { createHmac, timingSafeEqual } from 'node:crypto';
import { newId } from '../envelope/ids.js';
import { readJsonText } from '../envelope/json.js';
import { DEFAULT_CAPABILITY_TTL_SECONDS, DEFAULT_CLOCK_SKEW_SECONDS } from './config.js';
import { planDigest } from '../envelope/plan.js';
import type { CapabilityGrant, CapabilityKey } from './types.js';

/**
 * A capability token is a JWS in compact form (RFC 7515), HS256: `b64url(header).b64url(claims).b64url(mac)`.
 * The header is `{ alg: "HS256", typ: "JWT", kid }`; any JOSE library can read it, none is needed.
 * The claims bind who (tenant, task, agent), what (tool, resource, plan digest), under which policy
 * revision and budget, and until when (`exp`, seconds since the epoch).
 */
export interface CapabilityClaims {
  jti: string;
  iat: number;
  exp: number;
  tenant: string;
  task: string | null;
  agent: string | null;
  tool: string;
  resource: string | null;
  plan_digest: string;
  policy_revision: string;
  budget: Record<string, number>;
}

export type CapabilityFailure =
  | 'MALFORMED'
  | 'UNKNOWN_KEY'
  | 'BAD_SIGNATURE'
  | 'EXPIRED'
  | 'NOT_YET_VALID'
  | 'TOOL_MISMATCH'
  | 'RESOURCE_MISMATCH'
  | 'PLAN_MISMATCH'
  | 'TENANT_MISMATCH'
  | 'TASK_MISMATCH'
  | 'REVISION_MISMATCH'
  | 'REVOKED'
  | 'FROZEN';

export type CapabilityCheck =
  | { ok: true; claims: CapabilityClaims }
  /** `detail`: the freeze's reason for `FROZEN` (a breaker's names its figures). */
  | { ok: false; reason: CapabilityFailure; detail?: string };

/** HS256 needs a key at least as long as its output (RFC 7518 §3.2). */
export const MIN_CAPABILITY_KEY_BYTES = 32;

export interface IssueCapabilityInput {
  key: CapabilityKey;
  tenant: string;
  task: string | null;
  agent?: string | null;
  plan: { tool: string; action?: string | null; resource?: string | null; input: Record<string, unknown> };
  /** Pass the digest when it is already computed, so the plan is not canonicalized twice. */
  plan_digest?: string;
  policy_revision: string;
  budget?: Record<string, number>;
  now: Date;
  ttl_seconds?: number;
}

export function issueCapability(input: IssueCapabilityInput): CapabilityGrant & { claims: CapabilityClaims } {
  assertKey(input.key);
  const iat = Math.floor(input.now.getTime() / 1000);
  const claims: CapabilityClaims = {
    jti: newId('capability', input.now.getTime()),
    iat,
    exp: iat + (input.ttl_seconds ?? DEFAULT_CAPABILITY_TTL_SECONDS),
    tenant: input.tenant,
    task: input.task,
    agent: input.agent ?? null,
    tool: input.plan.tool,
    resource: input.plan.resource ?? null,
    plan_digest: input.plan_digest ?? planDigest(input.plan),
    policy_revision: input.policy_revision,
    budget: input.budget ?? {},
  };
  const header = headerFor(input.key.id);
  const body = b64(JSON.stringify(claims));
  const signature = mac(input.key.secret, `${header}.${body}`).toString('base64url');
  return {
    id: claims.jti,
    expires_at: new Date(claims.exp * 1000).toISOString(),
    token: `${header}.${body}.${signature}`,
    claims,
  };
}

export interface CheckCapabilityOptions {
  keys: readonly CapabilityKey[];
  /** The exact plan about to run; any difference from the signed one fails. */
  plan: { tool: string; action?: string | null; resource?: string | null; input: Record<string, unknown> };
  now: Date;
  clock_skew_seconds?: number;
  expect?: { tenant?: string; task?: string | null; policy_revision?: string };
}

export interface VerifyCapabilityOptions extends CheckCapabilityOptions {
  /** Revocation by capability id, task, agent or tenant: the claims say which apply. */
  isRevoked?: (claims: CapabilityClaims) => boolean | Promise<boolean>;
  /**
   * The freeze in force over the claims' agent or tenant, when the capability's tool writes: its reason.
   * A capability minted before a freeze (a person's, or a breaker's trip) stops working for side
   * effects at once, not when it expires (issue 20 point 3).
   */
  frozen?: (claims: CapabilityClaims) => Promise<string | undefined>;
}

/** Signature, expiry and binding; everything but revocation, which needs the store. */
export function checkCapability(token: string, opts: CheckCapabilityOptions): CapabilityCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every(isB64url)) return fail('MALFORMED');
  const [headerPart, bodyPart, sigPart] = parts as [string, string, string];
  const header = parseJson(headerPart);
  const kid = header?.['kid'];
  if (header?.['alg'] !== 'HS256' || typeof kid !== 'string') return fail('MALFORMED');
  const key = opts.keys.find((k) => k.id === kid);
  if (!key) return fail('UNKNOWN_KEY');
  const expected = mac(key.secret, `${headerPart}.${bodyPart}`);
  const given = Buffer.from(sigPart, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return fail('BAD_SIGNATURE');
  const claims = parseClaims(bodyPart);
  if (!claims) return fail('MALFORMED');

  const skew = opts.clock_skew_seconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  const now = opts.now.getTime() / 1000;
  if (now > claims.exp + skew) return fail('EXPIRED');
  if (now < claims.iat - skew) return fail('NOT_YET_VALID');

  if (claims.tool !== opts.plan.tool) return fail('TOOL_MISMATCH');
  if (claims.resource !== (opts.plan.resource ?? null)) return fail('RESOURCE_MISMATCH');
  if (claims.plan_digest !== planDigest(opts.plan)) return fail('PLAN_MISMATCH');
  const expect = opts.expect ?? {};
  if (expect.tenant !== undefined && claims.tenant !== expect.tenant) return fail('TENANT_MISMATCH');
  if (expect.task !== undefined && claims.task !== expect.task) return fail('TASK_MISMATCH');
  if (expect.policy_revision !== undefined && claims.policy_revision !== expect.policy_revision) {
    return fail('REVISION_MISMATCH');
  }
  return { ok: true, claims };
}

/** `checkCapability`, then revocation and freezes last: they are the only steps that touch the store. */
export async function verifyCapability(
  token: string,
  opts: VerifyCapabilityOptions,
): Promise<CapabilityCheck> {
  const checked = checkCapability(token, opts);
  if (!checked.ok) return checked;
  if (opts.isRevoked && (await opts.isRevoked(checked.claims))) return fail('REVOKED');
  const frozen = await opts.frozen?.(checked.claims);
  return frozen === undefined ? checked : { ok: false, reason: 'FROZEN', detail: frozen };
}

const headers = new Map<string, string>();

/** The header only changes with the key, so it is encoded once per key id. */
function headerFor(kid: string): string {
  let header = headers.get(kid);
  if (header === undefined) {
    header = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid }));
    headers.set(kid, header);
  }
  return header;
}

function fail(reason: CapabilityFailure): CapabilityCheck {
  return { ok: false, reason };
}

function assertKey(key: CapabilityKey): void {
  if (key.secret.length < MIN_CAPABILITY_KEY_BYTES) {
    // The message names the key id, never the secret.
    throw new RangeError(`capability key "${key.id}" is shorter than ${MIN_CAPABILITY_KEY_BYTES} bytes`);
  }
}

function mac(secret: Uint8Array, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** Strict: Node's decoder skips stray characters, so a lenient check would let two spellings verify. */
function isB64url(part: string): boolean {
  return (
    part.length > 0 &&
    /^[A-Za-z0-9_-]+$/.test(part) &&
    Buffer.from(part, 'base64url').toString('base64url') === part
  );
}

/** The header is read before the signature is checked: the door's depth and Unicode rules apply. */
function parseJson(part: string): Record<string, unknown> | undefined {
  const read = readJsonText(Buffer.from(part, 'base64url').toString('utf8'));
  const value = read.ok ? read.value : undefined;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseClaims(part: string): CapabilityClaims | undefined {
  const c = parseJson(part);
  if (!c) return undefined;
  const str = (v: unknown) => typeof v === 'string';
  const strOrNull = (v: unknown) => v === null || typeof v === 'string';
  const ok =
    str(c['jti']) &&
    Number.isSafeInteger(c['iat']) &&
    Number.isSafeInteger(c['exp']) &&
    str(c['tenant']) &&
    strOrNull(c['task']) &&
    strOrNull(c['agent']) &&
    str(c['tool']) &&
    strOrNull(c['resource']) &&
    str(c['plan_digest']) &&
    str(c['policy_revision']) &&
    typeof c['budget'] === 'object' &&
    c['budget'] !== null;
  return ok ? (c as unknown as CapabilityClaims) : undefined;
}
