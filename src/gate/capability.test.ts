import { describe, expect, it } from 'vitest';
import { type CapabilityClaims, checkCapability, issueCapability, verifyCapability } from './capability.js';
import { TEST_KEY } from './testing.js';

const now = new Date('2026-11-29T12:00:00Z');
const plan = { tool: 'Bash', action: 'exec', resource: 'repo/web', input: { command: 'npm test' } };
const issued = issueCapability({
  key: TEST_KEY,
  tenant: 't1',
  task: 'tsk_1',
  agent: 'agent-7',
  plan,
  policy_revision: 'rev_abc',
  budget: { steps_left: 10 },
  now,
});
const opts = { keys: [TEST_KEY], plan, now };
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
const reason = (token: string, over: Partial<Parameters<typeof checkCapability>[1]> = {}) => {
  const r = checkCapability(token, { ...opts, ...over });
  return r.ok ? 'OK' : r.reason;
};
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('capability tokens', () => {
  it('carry an id, a short expiry and every binding', () => {
    expect(issued.id).toMatch(/^cap_[0-9A-Z]{26}$/);
    expect(issued.expires_at).toBe('2026-11-29T12:05:00.000Z');
    expect(issued.claims).toMatchObject({
      tenant: 't1',
      task: 'tsk_1',
      agent: 'agent-7',
      tool: 'Bash',
      resource: 'repo/web',
      policy_revision: 'rev_abc',
      budget: { steps_left: 10 },
    });
    expect(issued.claims.plan_digest).toMatch(/^sha256:/);
  });

  it('are JWS compact HS256 with the key id in the header', () => {
    const [header] = issued.token.split('.');
    expect(JSON.parse(Buffer.from(header ?? '', 'base64url').toString())).toEqual({
      alg: 'HS256',
      typ: 'JWT',
      kid: 'k1',
    });
  });

  it('verify against the exact plan they were issued for', async () => {
    const r = await verifyCapability(issued.token, {
      ...opts,
      expect: { tenant: 't1', task: 'tsk_1', policy_revision: 'rev_abc' },
    });
    expect(r.ok && r.claims.jti).toBe(issued.id);
  });

  it('fail when the input differs by one character', () => {
    expect(reason(issued.token, { plan: { ...plan, input: { command: 'npm test ' } } })).toBe(
      'PLAN_MISMATCH',
    );
    expect(reason(issued.token, { plan: { ...plan, action: 'other' } })).toBe('PLAN_MISMATCH');
  });

  it('fail for another tool or resource', () => {
    expect(reason(issued.token, { plan: { ...plan, tool: 'Write' } })).toBe('TOOL_MISMATCH');
    expect(reason(issued.token, { plan: { ...plan, resource: 'repo/api' } })).toBe('RESOURCE_MISMATCH');
  });

  it('fail for another tenant, task or policy revision when the verifier asks', () => {
    expect(reason(issued.token, { expect: { tenant: 't2' } })).toBe('TENANT_MISMATCH');
    expect(reason(issued.token, { expect: { task: 'tsk_2' } })).toBe('TASK_MISMATCH');
    expect(reason(issued.token, { expect: { policy_revision: 'rev_new' } })).toBe('REVISION_MISMATCH');
  });

  it('accept a clock up to ten seconds behind expiry, and not eleven', () => {
    expect(reason(issued.token, { now: at(300 + 10) })).toBe('OK');
    expect(reason(issued.token, { now: at(300 + 11) })).toBe('EXPIRED');
    expect(reason(issued.token, { now: at(301), clock_skew_seconds: 0 })).toBe('EXPIRED');
  });

  it('fail when issued in the future beyond the skew allowance', () => {
    expect(reason(issued.token, { now: at(-9) })).toBe('OK');
    expect(reason(issued.token, { now: at(-11) })).toBe('NOT_YET_VALID');
  });

  it('fail when revoked, and the revocation check sees the claims', async () => {
    const seen: CapabilityClaims[] = [];
    const r = await verifyCapability(issued.token, {
      ...opts,
      isRevoked: async (claims) => {
        seen.push(claims);
        return claims.task === 'tsk_1';
      },
    });
    expect(r).toEqual({ ok: false, reason: 'REVOKED' });
    expect(seen[0]?.agent).toBe('agent-7');
  });

  it('fail when a claim is tampered with', () => {
    const [h, body, s] = issued.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as CapabilityClaims;
    const longer = b64({ ...claims, exp: claims.exp + 3600 });
    expect(reason(`${h}.${longer}.${s}`)).toBe('BAD_SIGNATURE');
  });

  it('fail when the signature is altered, truncated or missing', () => {
    const [h, body, s] = issued.token.split('.') as [string, string, string];
    const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    expect(reason(`${h}.${body}.${flipped}`)).toBe('BAD_SIGNATURE');
    expect(reason(`${h}.${body}.${s.slice(0, 20)}`)).toBe('BAD_SIGNATURE');
    expect(reason(`${h}.${body}.`)).toBe('MALFORMED');
    expect(reason(`${h}.${body}`)).toBe('MALFORMED');
  });

  it('fail under the wrong key, and with an unknown key id', () => {
    const wrong = { id: 'k1', secret: new Uint8Array(32).fill(8) };
    expect(reason(issued.token, { keys: [wrong] })).toBe('BAD_SIGNATURE');
    expect(reason(issued.token, { keys: [{ ...TEST_KEY, id: 'k2' }] })).toBe('UNKNOWN_KEY');
  });

  it('verify under a rotated key set that still holds the signing key', () => {
    const next = { id: 'k2', secret: new Uint8Array(32).fill(9) };
    expect(reason(issued.token, { keys: [next, TEST_KEY] })).toBe('OK');
  });

  it('refuse alg "none" and other algorithms', () => {
    const [, body, s] = issued.token.split('.') as [string, string, string];
    expect(reason(`${b64({ alg: 'none', kid: 'k1' })}.${body}.${s}`)).toBe('MALFORMED');
    expect(reason(`${b64({ alg: 'HS512', kid: 'k1' })}.${body}.${s}`)).toBe('MALFORMED');
  });

  it('refuse garbage and a non-canonical base64url spelling', () => {
    expect(reason('')).toBe('MALFORMED');
    expect(reason('not.a.token!')).toBe('MALFORMED');
    const [h, body, s] = issued.token.split('.') as [string, string, string];
    expect(reason(`${h}.${body}=.${s}`)).toBe('MALFORMED');
  });

  it('refuse to sign with a key shorter than 32 bytes', () => {
    const short = { id: 'weak', secret: new Uint8Array(16) };
    expect(() =>
      issueCapability({ key: short, tenant: 't', task: null, plan, policy_revision: 'r', now }),
    ).toThrow(/weak/);
  });
});
