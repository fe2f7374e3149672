import { describe, expect, it } from 'vitest';
import { findLinks } from './links.js';

const found = (text: string) => findLinks(text).map((l) => text.slice(l.start, l.end));

describe('finding links in text', () => {
  it.each([
    ['see https://evil.example/reset now', 'https://evil.example/reset'],
    ['click javascript:alert(document.cookie) here', 'javascript:alert(document.cookie)'],
    ['JavaScript:alert(1)', 'JavaScript:alert(1)'],
    ['vbscript:msgbox(1)', 'vbscript:msgbox(1)'],
    ['data:text/html;base64,PHNjcmlwdD4=', 'data:text/html;base64,PHNjcmlwdD4='],
    ['open //evil.example/x please', '//evil.example/x'],
    ['go to evil.example/reset', 'evil.example/reset'],
    ['go to evil.com/reset', 'evil.com/reset'],
    ['updated README.md', 'README.md'],
    ['www.evil.test is up', 'www.evil.test'],
    ['ftp://files.evil.test/a', 'ftp://files.evil.test/a'],
    ['mail a@evil.com', 'a@evil.com'],
    ['mailto:a@evil.com', 'mailto:a@evil.com'],
    ['admin at 10.0.0.1/admin', '10.0.0.1/admin'],
    ['http://127.0.0.1:8080/x', 'http://127.0.0.1:8080/x'],
    ['slack://open?team=T1', 'slack://open?team=T1'],
    ['tg://resolve?domain=x', 'tg://resolve?domain=x'],
    ['file:///etc/passwd', 'file:///etc/passwd'],
    ['(see https://evil.com/a).', 'https://evil.com/a'],
    ['[click](https://evil.com)', 'https://evil.com'],
    ['https://user:pw@evil.com/', 'https://user:pw@evil.com/'],
    ['https:/evil.com', 'https:/evil.com'],
  ])('finds the link in %j', (text, link) => {
    expect(found(text)).toContain(link);
  });

  it('finds a link with a zero-width space or a soft hyphen inside, and maps it onto the original', () => {
    const text = 'see https://ev\u200bil.exa\u00admple/reset now';
    const [l] = findLinks(text);
    expect(l).toMatchObject({ text: 'https://evil.example/reset', host: 'evil.example', scheme: 'https' });
    expect(text.slice(l!.start, l!.end)).toBe('https://ev\u200bil.exa\u00admple/reset');
  });

  it('reads fullwidth letters and ideographic full stops as a browser does', () => {
    expect(findLinks('ｈｔｔｐｓ：／／ｅｖｉｌ．ｃｏｍ／ｘ')[0]).toMatchObject({ host: 'evil.com' });
    expect(findLinks('evil。com/reset')[0]).toMatchObject({ host: 'evil.com' });
  });

  it.each([
    'Note: the build is green',
    'Time: 12:30, status: done',
    'data: 42 rows',
    'v1.2.3 shipped, e.g. the parser',
    '// TODO: tidy this up',
    'src/notify/content.ts:42 changed',
    'tests pass: 124 of 124',
  ])('leaves prose alone: %j', (text) => {
    expect(found(text)).toEqual([]);
  });
});
