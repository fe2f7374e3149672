import { describe, expect, it } from 'vitest';
import {
  applyAliases,
  checkArtifact,
  defang,
  defangLinks,
  gateContent,
  stripMassMentions,
} from './content.js';
import { SECRET_SAMPLES as SECRETS } from '../scan/testing.js';

const OPTS = { secrets: 'block' as const, allowed_link_domains: ['example.com'], detail_max_chars: 2000 };

describe('secret scanning', () => {
  it.each(SECRETS)('blocks a message holding a %s when secrets are set to block', (kind, secret) => {
    const out = gateContent({ summary: 'done', detail: `x ${secret} y` }, OPTS);
    expect(out.kind).toBe('blocked');
    if (out.kind === 'blocked') {
      expect(out.secrets).toContain(kind);
      expect(JSON.stringify(out.masked)).not.toContain(secret);
    }
  });

  it.each(SECRETS)('masks a %s when secrets are set to mask', (kind, secret) => {
    const out = gateContent({ summary: 'done', detail: `x ${secret} y` }, { ...OPTS, secrets: 'mask' });
    expect(out.kind).toBe('ok');
    if (out.kind === 'ok') {
      expect(out.content.detail).not.toContain(secret);
      expect(out.content.detail).toContain(`[redacted:${kind}]`);
      expect(out.rewrites.secrets).toContain(kind);
    }
  });
});

describe('links', () => {
  it('defangs a phishing link in free text so it is shown but not clickable', () => {
    const out = gateContent({ summary: 'log in at https://examp1e-login.com/reset now' }, OPTS);
    expect(out.kind === 'ok' && out.content.summary).toBe('log in at hxxps://examp1e-login[.]com/reset now');
  });

  it('keeps a link on an allowed domain or its subdomain clickable', () => {
    expect(defangLinks('see https://ci.example.com/run/1', ['example.com']).text).toBe(
      'see https://ci.example.com/run/1',
    );
  });

  it('defangs a look-alike domain that only ends with the allowed name', () => {
    expect(defangLinks('see https://badexample.com/x', ['example.com']).text).toBe(
      'see hxxps://badexample[.]com/x',
    );
  });

  it('defangs bare www hosts and other schemes', () => {
    expect(defangLinks('www.evil.test and ftp://files.evil.test/a', []).text).toBe(
      'www[.]evil[.]test and fxp://files[.]evil[.]test/a',
    );
    expect(defang('http://a.b/c.d')).toBe('hxxp://a[.]b/c.d');
  });

  it.each([
    ['https://example.com/pr/1', 'ok'],
    ['https://docs.example.com/report', 'ok'],
    ['https://example.com.evil.test/x', 'domain'],
    ['javascript:alert(1)', 'scheme'],
    ['https://user:pw@example.com/', 'credentials'],
    ['not a url', 'not_a_url'],
  ])('checks the artifact %s → %s', (link, expected) => {
    const r = checkArtifact(link, ['example.com']);
    expect(r.kind === 'ok' ? 'ok' : r.reason).toBe(expected);
  });

  it('refuses an artifact off the allowed domains and shows it defanged in the detail instead', () => {
    const out = gateContent({ summary: 'done', artifact: 'https://evil.test/pr' }, OPTS);
    expect(out.kind).toBe('ok');
    if (out.kind !== 'ok') return;
    expect(out.content.artifact).toBeUndefined();
    expect(out.rewrites.artifact_refused).toBe('domain');
    expect(out.content.detail).toContain('hxxps://evil[.]test/pr');
  });

  it('refuses every artifact when no domain is allowed', () => {
    expect(checkArtifact('https://example.com/x', [])).toEqual({ kind: 'refused', reason: 'domain' });
  });
});

describe('mass mentions', () => {
  it.each([
    '@all',
    '@everyone',
    '@here',
    '<!channel>',
    '<!here>',
    '<!everyone>',
    '<at user_id="all"></at>',
    '@所有人',
  ])('strips %s', (mention) => {
    const out = gateContent({ summary: `build broke ${mention} please look` }, OPTS);
    expect(out.kind === 'ok' && out.content.summary).not.toContain(mention);
    expect(out.kind === 'ok' && out.rewrites.mass_mentions).toBe(true);
  });

  it('keeps a mention of one person', () => {
    expect(stripMassMentions('ping @alice and @allison')).toBe('ping @alice and @allison');
  });
});

describe('lengths and aliases', () => {
  it('cuts a long detail to the cap with an ellipsis', () => {
    const out = gateContent({ summary: 's', detail: 'x'.repeat(5000) }, { ...OPTS, detail_max_chars: 100 });
    expect(out.kind === 'ok' && out.content.detail?.length).toBe(100);
    expect(out.kind === 'ok' && out.rewrites.detail_truncated).toBe(true);
  });

  it('keeps the summary within 120 characters after defanging made it longer', () => {
    const summary = `${'a'.repeat(90)} https://x.y.z.evil.test/`;
    const out = gateContent({ summary }, OPTS);
    expect(out.kind === 'ok' && out.content.summary.length).toBeLessThanOrEqual(120);
  });

  it('replaces internal names with aliases, longest first, at word edges only', () => {
    const aliases = {
      'acme/payments-api': 'service A',
      payments: 'billing',
      'release/2026-q4': 'a release branch',
    };
    expect(
      applyAliases(
        'merged acme/payments-api into release/2026-q4; payments ok; prepayments untouched',
        aliases,
      ),
    ).toBe('merged service A into a release branch; billing ok; prepayments untouched');
  });

  it('leaves text alone when there are no aliases', () => {
    expect(applyAliases('acme/payments-api', {})).toBe('acme/payments-api');
  });
});
