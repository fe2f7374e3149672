import { describe, expect, it } from 'vitest';
import { deriveKey } from '../../keys/derive.js';
import { deriveCapabilityKey } from './keys.js';

describe('deriveCapabilityKey', () => {
  it('signs with the vault key’s capability key and names it by a digest of it', () => {
    const vaultKey = Uint8Array.from({ length: 32 }, (_, i) => i);
    const key = deriveCapabilityKey(vaultKey);
    expect(Buffer.from(key.secret).equals(deriveKey(vaultKey, 'capability'))).toBe(true);
    // Pinned: the id is in every outstanding token's header.
    expect(key.id).toBe('vk-0c08397ae503');
  });
});
