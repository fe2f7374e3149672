import * as nodeCrypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest, RejectReason, Source, VerifyResult } from '../source.js';

/**
 * The signature checklist every inbound scheme must pass (STYLE.md): missing id, timestamp or
 * signature; a partial signature; an old and a future timestamp; several signatures (key rotation);
 * constant-time comparison. Prefixed and bare secrets are scheme-specific and live in the kind's test.
 *
 * The calling test file must spy on `timingSafeEqual` with, before its imports:
 *   vi.mock('node:crypto', async (orig) => { const m = await orig<typeof import('node:crypto')>();
 *     return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) }; });
 */

export interface SignOptions {
  /** When the sender signed (epoch ms); the request's `now` stays the suite's clock. */
  at?: number;
  /** Which configured secret signs; the suite's source must hold at least two. */
  secretIndex?: number;
  /** Where the scheme carries the sender's id (header or body), put this one. */
  deliveryId: string;
  /** Sign with a secret the source does not hold. */
  foreignSecret?: boolean;
}

export interface SourceCase {
  /** A source created from a config with two secrets (old and new, as during a rotation). */
  source: Source;
  /** Builds a request the way the real sender would, signed at `options.at`, verified at `now`. */
  sign(now: number, options: SignOptions): InboundRequest;
  /** Lower-case header names the checklist removes or corrupts; `id`/`timestamp` only where the scheme has them. */
  headers: { signature: string; id?: string; timestamp?: string };
  /** False for shared-token schemes (Telegram, GitLab): the header does not depend on the body. */
  signsBody: boolean;
  /** False when the id is derived from content rather than sent (generic HMAC without an id header). */
  reportsDeliveryId?: boolean;
  /** The secret values, so no rejection message can be shown to contain one. */
  secrets: readonly string[];
}

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const MINUTE = 60_000;

function withHeader(req: InboundRequest, name: string, value: string | undefined): InboundRequest {
  const headers: Record<string, string> = { ...req.headers };
  if (value === undefined) delete headers[name];
  else headers[name] = value;
  return { ...req, headers };
}

/** Changes one character in the middle of the value to another of the same alphabet. */
function flipMiddle(value: string): string {
  const chars = [...value];
  for (let i = Math.floor(chars.length / 2); i < chars.length; i++) {
    const c = chars[i] ?? '';
    if (/[A-Za-z0-9]/.test(c)) {
      chars[i] = c === 'a' ? 'b' : 'a';
      return chars.join('');
    }
  }
  throw new Error(`no alphanumeric character to flip in the second half of ${value.length} characters`);
}

export function runSourceCase(name: string, c: SourceCase): void {
  let n = 0;
  const id = () => `case-delivery-${++n}`;
  const signed = (options: Partial<SignOptions> = {}) => c.sign(NOW, { deliveryId: id(), ...options });
  const sig = (req: InboundRequest) => req.headers[c.headers.signature] ?? '';

  function expectRejected(result: VerifyResult, reason: RejectReason): void {
    expect(result).toMatchObject({ kind: 'rejected', reason });
    if (result.kind !== 'rejected') return;
    expect(result.message.length).toBeGreaterThan(0);
    for (const secret of c.secrets) expect(result.message).not.toContain(secret);
  }

  describe(`${name} (the shared signature checklist)`, () => {
    it('accepts a request signed the way the sender signs it', () => {
      const deliveryId = id();
      const result = c.source.verify(c.sign(NOW, { deliveryId }));
      expect(result.kind).toBe('ok');
      if (result.kind !== 'ok') return;
      if (c.reportsDeliveryId !== false) expect(result.deliveryId).toBe(deliveryId);
      else expect(result.deliveryId).not.toBe('');
    });

    it('accepts a request signed with the second configured secret (key rotation)', () => {
      expect(c.source.verify(signed({ secretIndex: 1 })).kind).toBe('ok');
    });

    it('rejects a request signed with a secret it does not hold', () => {
      expectRejected(c.source.verify(signed({ foreignSecret: true })), 'bad_signature');
    });

    it('rejects a request without a signature', () => {
      expectRejected(
        c.source.verify(withHeader(signed(), c.headers.signature, undefined)),
        'missing_signature',
      );
    });

    it('treats an empty signature header as missing', () => {
      expectRejected(c.source.verify(withHeader(signed(), c.headers.signature, '')), 'missing_signature');
    });

    it('rejects a partial signature (its first half)', () => {
      const req = signed();
      const half = sig(req).slice(0, Math.ceil(sig(req).length / 2));
      expectRejected(c.source.verify(withHeader(req, c.headers.signature, half)), 'bad_signature');
    });

    it('rejects a signature with one character changed', () => {
      const req = signed();
      expectRejected(
        c.source.verify(withHeader(req, c.headers.signature, flipMiddle(sig(req)))),
        'bad_signature',
      );
    });

    it('rejects a signature with a character appended', () => {
      const req = signed();
      expectRejected(c.source.verify(withHeader(req, c.headers.signature, `${sig(req)}0`)), 'bad_signature');
    });

    if (c.signsBody) {
      it('rejects a body changed by one byte', () => {
        const req = signed();
        const body = Uint8Array.from(req.body);
        const at = Math.floor(body.length / 2);
        body[at] = (body[at] ?? 0) ^ 0x01;
        expectRejected(c.source.verify({ ...req, body }), 'bad_signature');
      });
    }

    const idHeader = c.headers.id;
    if (idHeader !== undefined) {
      it('rejects a request without its delivery id', () => {
        expectRejected(c.source.verify(withHeader(signed(), idHeader, undefined)), 'missing_id');
      });
    }

    const tsHeader = c.headers.timestamp;
    if (tsHeader !== undefined) {
      it('rejects a request without its timestamp', () => {
        expectRejected(c.source.verify(withHeader(signed(), tsHeader, undefined)), 'missing_timestamp');
      });

      it('rejects a timestamp that is not an integer', () => {
        const req = signed();
        const value = `${req.headers[tsHeader]}abc`;
        expectRejected(c.source.verify(withHeader(req, tsHeader, value)), 'bad_timestamp');
      });

      it('rejects a signature whose timestamp is six minutes old', () => {
        expectRejected(c.source.verify(signed({ at: NOW - 6 * MINUTE })), 'timestamp_too_old');
      });

      it('rejects a signature whose timestamp is six minutes in the future', () => {
        expectRejected(c.source.verify(signed({ at: NOW + 6 * MINUTE })), 'timestamp_in_future');
      });

      it('accepts a timestamp four minutes old or four minutes ahead (clock skew)', () => {
        expect(c.source.verify(signed({ at: NOW - 4 * MINUTE })).kind).toBe('ok');
        expect(c.source.verify(signed({ at: NOW + 4 * MINUTE })).kind).toBe('ok');
      });

      it('rejects a replay whose timestamp was moved forward without re-signing', () => {
        const req = signed({ at: NOW - 10 * MINUTE });
        const moved = withHeader(req, tsHeader, String(Math.floor(NOW / 1000)));
        expectRejected(c.source.verify(moved), 'bad_signature');
      });
    }

    it('compares the signature with crypto.timingSafeEqual', () => {
      const spy = nodeCrypto.timingSafeEqual;
      if (!vi.isMockFunction(spy)) {
        throw new Error(
          'mock node:crypto in the calling test file (see source.case.ts) so this can be checked',
        );
      }
      spy.mockClear();
      const req = signed();
      c.source.verify(withHeader(req, c.headers.signature, flipMiddle(sig(req))));
      expect(spy).toHaveBeenCalled();
    });
  });
}
