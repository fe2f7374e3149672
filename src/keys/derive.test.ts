import { describe, expect, it } from 'vitest';
import { DERIVED_KEY_BYTES, deriveKey, KEY_LABELS, type KeyPurpose } from './derive.js';

/** The bytes 0..31. The expected keys were computed with the code before the helper existed. */
const vaultKey = Uint8Array.from({ length: 32 }, (_, i) => i);

const PINNED: Record<KeyPurpose, string> = {
  capability: '681fb9cb74d6790067043a66111e0437beb140aa8fe06876ae6b53528b543e3e',
  approvalLink: '9451b2660dfb1f96b1c458aa579877abaeadff62b099d9f56c4726ddee323652',
  replyLink: 'e07dbb0b205c66dccbec1ed2f97bc90849929024cc76609d5ae12ec0bcb0187c',
  consoleSession: '80cbac503614acd9a971fc71d2cb77be0a07d13c1436a5044e1ef0ed37dc085e',
};

describe('deriveKey', () => {
  it.each(Object.keys(PINNED) as KeyPurpose[])(
    'derives the same %s key as before, byte for byte',
    (purpose) => {
      expect(deriveKey(vaultKey, purpose).toString('hex')).toBe(PINNED[purpose]);
    },
  );

  it('gives each purpose its own label, so no two purposes share a key', () => {
    const labels = Object.values(KEY_LABELS);
    expect(new Set(labels).size).toBe(labels.length);
  });

  it('derives 32 bytes unless told otherwise', () => {
    expect(deriveKey(vaultKey, 'capability')).toHaveLength(DERIVED_KEY_BYTES);
    expect(deriveKey(vaultKey, 'capability', 16).toString('hex')).toBe(PINNED.capability.slice(0, 32));
  });
});
