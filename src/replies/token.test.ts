import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveLinkKey, signLink } from '../approvals/links.js';
import { deriveKey } from '../keys/derive.js';
import { deriveReplyKey, signReply, verifyReply } from './token.js';

const vaultKey = randomBytes(32);
const key = deriveReplyKey(vaultKey);
const subject = {
  task_id: 'tsk_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
  session_id: 'a1b2c3d4-e5f6-7890-abcd-ef0123456789',
  channel: 'phone',
  expires_at: 1_800_000_000_000,
};

describe('reply tokens', () => {
  it('signs with the vault key’s reply-link key (pinned in keys/derive.test.ts)', () => {
    expect(key.equals(deriveKey(vaultKey, 'replyLink'))).toBe(true);
  });

  it('round-trips the task, session, channel and expiry, with a fresh nonce each time', () => {
    const a = signReply(key, subject);
    const b = signReply(key, subject);
    expect(a).not.toBe(b);
    expect(verifyReply(key, a)).toMatchObject(subject);
    expect(verifyReply(key, a)?.nonce).not.toBe(verifyReply(key, b)?.nonce);
  });

  it('refuses a token from another key, a changed payload, and an approval link token', () => {
    const token = signReply(key, subject);
    expect(verifyReply(deriveReplyKey(randomBytes(32)), token)).toBeUndefined();
    // Same vault key, approval label: a different key, so an approval token never verifies here.
    expect(deriveLinkKey(vaultKey).equals(key)).toBe(false);
    const approval = signLink(deriveLinkKey(vaultKey), {
      id: 'apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
      action: 'deploy',
      plan_digest: 'sha256:x',
      expires_at: subject.expires_at,
    });
    expect(verifyReply(key, approval)).toBeUndefined();
    const [payload, mac] = token.split('.');
    const other = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), s: 'other-session' }),
    ).toString('base64url');
    expect(verifyReply(key, `${other}.${mac}`)).toBeUndefined();
    expect(verifyReply(key, 'x'.repeat(5000))).toBeUndefined();
  });

  it('refuses a signed payload whose fields are not what a link carries', () => {
    const bad = signReply(key, { ...subject, session_id: '--flag' });
    expect(verifyReply(key, bad)).toBeUndefined();
  });
});
