import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { resolveVaultKey, Vault } from './vault.js';

const DIALECTS = await dialects();

describe.each(DIALECTS)('vault on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  it('stores ciphertext only and gives the plaintext back with its digest', async () => {
    store = await freshStore(dialect);
    const vault = new Vault(store.db, randomBytes(32));
    const { ref, digest } = await vault.put('{"secret":"hunter2"}', { tenantId: 't' });
    expect(ref).toMatch(/^vault:\/\/vlt_/);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const raw = await store.db.query<{ ciphertext: Buffer }>({ text: 'SELECT ciphertext FROM vault' });
    expect(Buffer.from(raw[0]!.ciphertext).toString()).not.toContain('hunter2');
    expect((await vault.get(ref))!.toString()).toBe('{"secret":"hunter2"}');
  });

  it('answers a readSoon payload from memory once its transaction commits, never after a rollback or its expiry', async () => {
    store = await freshStore(dialect);
    let clock = Date.now();
    const vault = new Vault(store.db, randomBytes(32), () => clock);
    const kept = await store.db.tx((tx) =>
      vault.put('{"n":1}', { tenantId: 't', ttlMs: 60_000, db: tx, readSoon: true }),
    );
    // The row is gone, yet the reader that follows at once still gets the bytes it sealed.
    await store.db.query({ text: 'DELETE FROM vault WHERE ref = $1', values: [kept.ref] });
    const first = await vault.get(kept.ref);
    expect(first?.toString()).toBe('{"n":1}');
    first?.fill(0);
    expect((await vault.get(kept.ref))?.toString()).toBe('{"n":1}');
    let rolledBack = '';
    await store.db
      .tx(async (tx) => {
        rolledBack = (await vault.put('{"n":2}', { tenantId: 't', db: tx, readSoon: true })).ref;
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await vault.get(rolledBack)).toBeUndefined();
    clock += 60_000;
    expect(await vault.get(kept.ref)).toBeUndefined();
    const purged = await vault.put('{"n":3}', { tenantId: 't', ttlMs: 1, readSoon: true });
    clock += 2;
    expect(await vault.purgeExpired()).toBe(1);
    expect(await vault.get(purged.ref)).toBeUndefined();
  });

  it('seals every payload under a nonce of its own, across refills of the nonce pool', async () => {
    store = await freshStore(dialect);
    const vault = new Vault(store.db, randomBytes(32));
    // 341 nonces per refill (vault.ts): 800 seals cross two refills.
    const refs = await Promise.all(
      Array.from({ length: 800 }, (_, i) => vault.put(`payload ${i}`, { tenantId: 't' })),
    );
    const rows = await store.db.query<{ iv: Buffer }>({ text: 'SELECT iv FROM vault' });
    const ivs = new Set(rows.map((r) => Buffer.from(r.iv).toString('hex')));
    expect(rows.every((r) => r.iv.length === 12)).toBe(true);
    expect(ivs.size).toBe(800);
    expect((await vault.get(refs[799]!.ref))!.toString()).toBe('payload 799');
  });

  it('refuses a ciphertext moved onto another row', async () => {
    store = await freshStore(dialect);
    const vault = new Vault(store.db, randomBytes(32));
    const a = await vault.put('a', { tenantId: 't' });
    const b = await vault.put('b', { tenantId: 't' });
    await store.db.query({
      text: 'UPDATE vault SET ciphertext = (SELECT ciphertext FROM vault WHERE ref = $1), iv = (SELECT iv FROM vault WHERE ref = $1), tag = (SELECT tag FROM vault WHERE ref = $1) WHERE ref = $2',
      values: [a.ref, b.ref],
    });
    await expect(vault.get(b.ref)).rejects.toThrow();
  });

  it('forgets payloads past their retention', async () => {
    store = await freshStore(dialect);
    let now = 1000;
    const vault = new Vault(store.db, randomBytes(32), () => now);
    const { ref } = await vault.put('x', { tenantId: 't', ttlMs: 100 });
    now = 2000;
    expect(await vault.get(ref)).toBeUndefined();
    expect(await vault.purgeExpired()).toBe(1);
  });
});

describe('vault key', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('generates a private key file on first start and reads the same key after', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-key-'));
    dirs.push(dir);
    const file = join(dir, 'vault.key');
    const first = resolveVaultKey('NO_SUCH_VAR', file, {});
    expect(first.source).toMatchObject({ kind: 'file', created: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = resolveVaultKey('NO_SUCH_VAR', file, {});
    expect(second.key.equals(first.key)).toBe(true);
    expect(readFileSync(file, 'utf8').trim().length).toBeGreaterThan(40);
  });

  it('prefers the environment and rejects a key of the wrong size without echoing it', () => {
    const key = randomBytes(32).toString('base64');
    expect(resolveVaultKey('K', '/nonexistent/x', { K: key }).source).toEqual({ kind: 'env', name: 'K' });
    expect(() => resolveVaultKey('K', '/nonexistent/x', { K: 'c2hvcnQ=' })).toThrow(/K must hold 32 bytes/);
    try {
      resolveVaultKey('K', '/nonexistent/x', { K: 'c2hvcnQ=' });
    } catch (err) {
      expect((err as Error).message).not.toContain('c2hvcnQ=');
    }
  });
});
