import { describe, expect, it } from 'vitest';
import { matchesAny, safeEqual } from './compare.js';

describe('safeEqual and matchesAny', () => {
  it('compares exactly, including lengths and multi-byte characters', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
    expect(safeEqual('é', 'e\u0301')).toBe(false);
  });

  it('matches any one of several expected values', () => {
    expect(matchesAny('b', ['a', 'b'])).toBe(true);
    expect(matchesAny('c', ['a', 'b'])).toBe(false);
    expect(matchesAny('a', [])).toBe(false);
  });
});
