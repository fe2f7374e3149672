import { describe, expect, it } from 'vitest';
import { isEventType } from '../envelope/catalogue.js';
import { BODY_EXCERPT_CHARS, attemptRecord } from './events.js';
import type { SendResult } from '../egress/index.js';
import { classify } from './retry.js';

const mid = () => 0.5;

describe('attemptRecord', () => {
  it('records a success without the receiver’s body', () => {
    const r: SendResult = {
      sent: true,
      status: 200,
      headers: {},
      body: '{"ok":true,"text":"hi"}',
      durationMs: 12,
    };
    const rec = attemptRecord(r, classify(r, { attempt: 1, now: 0 }), 1);
    expect(rec).toMatchObject({
      type: 'integration.delivery.succeeded',
      data: { outcome: 'ok', status: 200 },
    });
    expect(rec.data.body_excerpt).toBeUndefined();
  });

  it('records a retry with its next time and the throttle flag', () => {
    const r: SendResult = { sent: true, status: 429, headers: {}, body: 'slow down', durationMs: 3 };
    const rec = attemptRecord(r, classify(r, { attempt: 1, now: 0, random: mid }), 1);
    expect(rec).toMatchObject({
      type: 'integration.delivery.failed',
      data: { next_at: 5_000, throttle: true, body_excerpt: 'slow down' },
    });
  });

  it('records a blocked URL as blocked with the guard’s reason', () => {
    const r: SendResult = {
      sent: false,
      error: 'blocked',
      blocked: {
        reason: 'private_address',
        detail: 'a.example resolves to 10.0.0.1 (private), not in egress.allow',
      },
      durationMs: 1,
    };
    const rec = attemptRecord(r, classify(r, { attempt: 1, now: 0 }), 1);
    expect(rec.type).toBe('integration.delivery.blocked');
    expect(rec.data.blocked_reason).toBe('private_address');
    expect(rec.summary).toContain('10.0.0.1');
  });

  it('records an unknown and a 410 that disables the endpoint', () => {
    const lost: SendResult = { sent: true, error: 'timeout', durationMs: 15_000 };
    expect(attemptRecord(lost, classify(lost, { attempt: 2, now: 0 }), 2).type).toBe(
      'integration.delivery.unknown',
    );
    const gone: SendResult = { sent: true, status: 410, headers: {}, body: '', durationMs: 1 };
    expect(attemptRecord(gone, classify(gone, { attempt: 1, now: 0 }), 1)).toMatchObject({
      type: 'integration.delivery.dead',
      data: { disable: true },
    });
  });

  it('keeps only an excerpt of a long body', () => {
    const r: SendResult = { sent: true, status: 500, headers: {}, body: 'x'.repeat(10_000), durationMs: 1 };
    expect(attemptRecord(r, classify(r, { attempt: 1, now: 0 }), 1).data.body_excerpt).toHaveLength(
      BODY_EXCERPT_CHARS,
    );
  });

  it('only uses event types from the catalogue', () => {
    const r: SendResult = { sent: false, error: 'refused', durationMs: 1 };
    for (const attempt of [1, 8])
      expect(isEventType(attemptRecord(r, classify(r, { attempt, now: 0 }), attempt).type)).toBe(true);
  });
});
