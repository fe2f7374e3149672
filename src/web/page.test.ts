import { describe, expect, it } from 'vitest';
import { definitionList, escapeHtml, pageLayout } from './page.js';

describe('the phone-page shell', () => {
  it('escapes every character that could open markup or an attribute', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe(
      '&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;&#96;',
    );
  });

  it('escapes the title and both sides of every listed row', () => {
    const html = pageLayout('<T>', definitionList([['<k>', '"v"']]), 'p{}');
    expect(html).toContain('<title>&#60;T&#62;</title>');
    expect(html).toContain('<dt>&#60;k&#62;</dt><dd>&#34;v&#34;</dd>');
    expect(html).toContain('p{}');
    expect(html).not.toContain('<script');
  });
});
