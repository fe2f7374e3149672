import { describe, expect, it } from 'vitest';
import { checkTimestamp } from './timestamp.js';

const T = 1_700_000_000;

describe('checkTimestamp', () => {
  it('accepts the edges of the window and rejects one second past them', () => {
    expect(checkTimestamp(String(T), 'ts', (T + 300) * 1000, 300)).toEqual({ ok: true, ms: T * 1000 });
    expect(checkTimestamp(String(T), 'ts', (T - 300) * 1000, 300).ok).toBe(true);
    expect(checkTimestamp(String(T), 'ts', (T + 301) * 1000, 300)).toMatchObject({
      rejected: { reason: 'timestamp_too_old' },
    });
    expect(checkTimestamp(String(T), 'ts', (T - 301) * 1000, 300)).toMatchObject({
      rejected: { reason: 'timestamp_in_future' },
    });
  });

  it('compares whole seconds, as the reference libraries do', () => {
    expect(checkTimestamp(String(T), 'ts', (T + 300) * 1000 + 999, 300).ok).toBe(true);
  });

  it('refuses anything but plain digits', () => {
    for (const raw of ['12abc', '-5', '1.5', '1e9', ' 1', '0x10', '']) {
      expect(checkTimestamp(raw, 'ts', 0, 300), raw).toMatchObject({ rejected: { reason: 'bad_timestamp' } });
    }
  });

  it('reads millisecond timestamps when told to', () => {
    expect(checkTimestamp(String(T * 1000 + 5), 'ts', T * 1000, 300, 'ms')).toEqual({
      ok: true,
      ms: T * 1000 + 5,
    });
  });
});
