import { createHash, hkdfSync } from 'node:crypto';
import type { CapabilityKey } from '../types.js';

/** HKDF `info` label: distinct from the approval-link label, so the two keys never coincide. */
export const CAPABILITY_KEY_LABEL = 'switchboard capability v1';

/**
 * The capability signing key, derived from the vault key with HKDF-SHA256 (as the approval links
 * are, with another label). Replicas share the vault key, so every replica signs and verifies the same
 * tokens, and there is no second secret to back up. The key id is a digest of the derived key: it
 * changes when the vault key rotates (old tokens then fail `UNKNOWN_KEY`, and they expire in minutes
 * anyway), and it says nothing about the secret.
 */
export function deriveCapabilityKey(vaultKey: Uint8Array): CapabilityKey {
  const secret = Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), CAPABILITY_KEY_LABEL, 32));
  const id = `vk-${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
  return { id, secret };
}
