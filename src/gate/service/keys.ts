import { createHash } from 'node:crypto';
import { deriveKey } from '../../keys/derive.js';
import type { CapabilityKey } from '../types.js';

/**
 * The capability signing key, derived from the vault key (`deriveKey`, label `capability`), so every
 * replica signs and verifies the same tokens. The key id is a digest of the derived key: it changes
 * when the vault key rotates (old tokens then fail `UNKNOWN_KEY`, and they expire in minutes anyway),
 * and it says nothing about the secret.
 */
export function deriveCapabilityKey(vaultKey: Uint8Array): CapabilityKey {
  const secret = deriveKey(vaultKey, 'capability');
  const id = `vk-${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
  return { id, secret };
}
