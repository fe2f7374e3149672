import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing, keyDigest } from './auth.js';

describe('KeyRing.resolveMac', () => {
  const macKey = Buffer.alloc(32, 9);
  const mac = (d: Buffer) => createHmac('sha256', macKey).update(d).digest();

  it('finds the key whose digest, passed through the MAC, is the one kept', () => {
    const ring = new KeyRing([
      { name: 'ops', role: 'admin', key: 'admin-key-0123456789' },
      { name: 'me', role: 'approver', key: 'approver-key-0123456789' },
    ]);
    expect(ring.resolveMac(mac, mac(keyDigest('approver-key-0123456789')))).toEqual({
      name: 'me',
      role: 'approver',
    });
  });

  it('finds nothing once the key is removed, or under another MAC key', () => {
    const ring = new KeyRing([]);
    ring.add('runtime-key-0123456789', { name: 'tmp', role: 'admin' });
    const kept = mac(keyDigest('runtime-key-0123456789'));
    const other = (d: Buffer) => createHmac('sha256', Buffer.alloc(32, 1)).update(d).digest();
    expect(ring.resolveMac(other, kept)).toBeUndefined();
    ring.remove('runtime-key-0123456789');
    expect(ring.resolveMac(mac, kept)).toBeUndefined();
    expect(ring.resolveMac(mac, Buffer.alloc(3))).toBeUndefined();
  });
});
