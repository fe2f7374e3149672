import { hkdfSync } from 'node:crypto';

/**
 * Keys derived from the vault key, one HKDF `info` label per purpose. Replicas share the vault key (they
 * must, to read each other's payloads), so they derive the same keys and accept each other's tokens,
 * and there is no second secret to back up. The labels live together so that no two purposes can share
 * one: a token signed for one purpose then never verifies for another. Changing a label (or the hash,
 * salt or length below) invalidates every outstanding token of that purpose; derive.test.ts pins the
 * derived bytes so that cannot happen by accident.
 */
export const KEY_LABELS = {
  /** Capability tokens (the gate). */
  capability: 'switchboard capability v1',
  /** Signed approval links for phones. */
  approvalLink: 'switchboard approval link v1',
  /** Signed reply links for phones. */
  replyLink: 'switchboard reply link v1',
  /** Console sessions: the MAC of the key a session was signed in with (src/console/sessions.ts). */
  consoleSession: 'switchboard console session v1',
} as const;

export type KeyPurpose = keyof typeof KEY_LABELS;

/** An HMAC-SHA256 key gains nothing beyond the hash's own 32 bytes. */
export const DERIVED_KEY_BYTES = 32;

/**
 * HKDF-SHA256 with an empty salt: the vault key is already 32 uniformly random bytes, so the extract
 * step needs no salt to be sound (RFC 5869 §3.1), and an empty one keeps every replica's result equal.
 */
export function deriveKey(vaultKey: Uint8Array, purpose: KeyPurpose, length = DERIVED_KEY_BYTES): Buffer {
  return Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), KEY_LABELS[purpose], length));
}
