import { describe, expect, it } from 'vitest';
import { measure, stripMassMentions, truncate } from './index.js';

describe('stripMassMentions', () => {
  it('removes every room-wide mention form the providers know', () => {
    const text =
      'a @all b @everyone c @here d <!channel> e <!here|here> f <at user_id="all">所有人</at> g <at id=all></at> h @所有人';
    expect(stripMassMentions(text)).toBe('a  b  c  d  e  f  g  h ');
  });

  it('does not rebuild a mass mention out of the pieces it removed', () => {
    expect(stripMassMentions('@<!here>all and <!<!here>channel>')).toBe(' and ');
  });

  it('keeps mentions of people whose names start like a mass mention', () => {
    expect(stripMassMentions('ask @alice, @allison and @hereford')).toBe(
      'ask @alice, @allison and @hereford',
    );
  });
});

describe('truncate', () => {
  it('leaves text that fits alone', () => {
    expect(truncate('short', 5, 'chars')).toBe('short');
  });

  it('cuts to the limit including the ellipsis', () => {
    expect(truncate('abcdefgh', 5, 'chars')).toBe('abcd…');
  });

  it('counts UTF-8 bytes and never splits a character', () => {
    const out = truncate('数据库迁移失败', 10, 'bytes');
    expect(out).toBe('数据…');
    expect(measure(out, 'bytes')).toBeLessThanOrEqual(10);
  });

  it('never splits a surrogate pair', () => {
    expect(truncate('🚀🚀🚀', 4, 'chars')).toBe('🚀…');
  });
});
