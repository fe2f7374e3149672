import { randomFillSync } from 'node:crypto';

/**
 * Bytes from the CSPRNG, drawn 4 KiB at a time instead of one call per use: ids (`ids.ts`, 16 random
 * characters each) and the vault's GCM nonces (12 bytes per seal) were each a few per cent of a
 * request's CPU one `randomBytes` at a time. Every byte is handed out once; a refill overwrites only
 * bytes already handed out, and `bytes` copies into memory of its own, so no value changes after use.
 */
export class RandomPool {
  private readonly pool: Uint8Array;
  private at: number;

  constructor(size = 4096) {
    this.pool = new Uint8Array(size);
    this.at = size;
  }

  /** One uniformly random byte. */
  byte(): number {
    if (this.at >= this.pool.length) this.refill();
    return this.pool[this.at++]!;
  }

  /** `n` (at most the pool's size) random bytes in a Buffer of their own (never a slice of a shared pool). */
  bytes(n: number): Buffer {
    if (this.at + n > this.pool.length) this.refill();
    const out = Buffer.alloc(n);
    out.set(this.pool.subarray(this.at, this.at + n));
    this.at += n;
    return out;
  }

  private refill(): void {
    randomFillSync(this.pool);
    this.at = 0;
  }
}
