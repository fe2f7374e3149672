import { describe, expect, it } from 'vitest';
import { fitText } from './text.js';

describe('fitText', () => {
  it('cuts only the detail, so the head and the links survive', () => {
    const out = fitText('head', 'd'.repeat(100), 'link: https://x', 40, 'chars');
    expect(out.startsWith('head\n\n')).toBe(true);
    expect(out.endsWith('…\n\nlink: https://x')).toBe(true);
    expect(out.length).toBe(40);
  });
});
