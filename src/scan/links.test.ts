import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cannotHoldLink, findLinks, scanLinks } from './links.js';

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

  it('skips the scan only for text in which the full scan finds no link', () => {
    // Words that come close to links without a dot, colon, @ or //, and the characters that make one.
    const piece = fc.constantFrom(
      'localhost',
      'LocalHost',
      'www',
      'com',
      'evil',
      'http',
      'https',
      'javascript',
      'mailto',
      'xn--80ak6aa92e',
      '10',
      '0',
      ' ',
      '\n',
      '.',
      ':',
      '@',
      '/',
      '//',
      '\\',
      '[',
      ']',
      '\u3002',
      '\uff0e',
      '\u200b',
      '#',
      '?',
      '-',
      '_',
      '~',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 4 })), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        if (cannotHoldLink(text)) expect(scanLinks(text)).toEqual([]);
        else expect(findLinks(text)).toEqual(scanLinks(text));
      }),
      { numRuns: 3000 },
    );
  });

  it.each(['a.b', 'x:y', 'a@b', '//x', 'go to localhost', 'evil\u3002com', 'ｅｖｉｌ．ｃｏｍ'])(
    'scans %j in full',
    (text) => {
      expect(cannotHoldLink(text)).toBe(false);
    },
  );
  it.each(['bench call 42', 'tests pass (124 of 124)', 'step 3 of 7; retrying #2'])(
    'skips the scan of %j',
    (text) => {
      expect(cannotHoldLink(text)).toBe(true);
    },
  );
});
