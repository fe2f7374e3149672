import { describe, expect, it } from 'vitest';
import {
  applyAliases,
  checkArtifact,
  defang,
  defangLinks,
  gateContent,
  maskSecrets,
  type SecretKind,
  scanSecrets,
  stripMassMentions,
} from './content.js';

// Built from pieces so the repository itself never holds a token-shaped string a scanner would flag.
const j = (...parts: string[]) => parts.join('');
const SECRETS: [SecretKind, string][] = [
  ['aws_access_key', j('AKIA', 'IOSFODNN7', 'EXAMPLE')],
  ['gcp_api_key', j('AIza', 'SyA-1234567890abcdefghijklmnopqrstu')],
  ['gcp_service_account', j('"private_key_id": "', 'a'.repeat(40), '"')],
  ['azure_key', j('AccountKey=', 'A'.repeat(30), 'b'.repeat(30), '==')],
  ['github_token', j('ghp_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8')],
  ['github_token', j('gho_', 'z'.repeat(36))],
  ['github_token', j('ghs_', 'Y'.repeat(36))],
  ['github_token', j('github_pat_', '11ABCDEFG0', 'x'.repeat(30))],
  ['slack_token', j('xoxb-', '123456789012-', '1234567890123-abcdefghijklmnop')],
  ['slack_token', j('xoxp-', '1234567890-abcdef')],
  ['openai_key', j('sk-', 'abcdefghijklmnopqrstuvwxyz012345')],
  ['openai_key', j('sk-proj-', 'abcdefghijklmnopqrstuvwxyz_0123')],
  ['anthropic_key', j('sk-ant-', 'api03-', 'abcdefghijklmnopqrstuvwxyz')],
  ['private_key', j('-----BEGIN RSA ', 'PRIVATE KEY-----\nMIIEow\n-----END RSA ', 'PRIVATE KEY-----')],
  ['private_key', j('-----BEGIN OPENSSH ', 'PRIVATE KEY-----\nb3BlbnNz')],
  [
    'jwt',
    j('eyJhbGciOiJIUzI1NiJ9', '.eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'),
  ],
  ['password_assignment', 'db password=hunter2xyz'],
  ['password_assignment', 'secret: s3cr3t-value'],
  ['bearer_token', j('Authorization: Bearer ', 'aZ3kP9qL2mX7vR4tY8wN1bC6')],
];

const OPTS = { secrets: 'block' as const, allowed_link_domains: ['example.com'], detail_max_chars: 2000 };

describe('secret scanning', () => {
  it.each(SECRETS)('finds a %s', (kind, secret) => {
    const found = scanSecrets(`deploy log: ${secret} end`);
    expect(found.map((f) => f.kind)).toContain(kind);
  });

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

  it('keeps the words around a password assignment and masks only the value', () => {
    expect(maskSecrets('login password=hunter2xyz ok')).toBe(
      'login password=[redacted:password_assignment] ok',
    );
  });

  it('does not take ordinary prose, ids or a low-entropy bearer word for a secret', () => {
    for (const text of [
      'tests pass: 124 of 124, build 8f3a2c1',
      'task tsk_01J9Z3ABCDEFGHJKMNPQRSTVWX is done',
      'the key is in the vault, see the runbook',
      'Bearer aaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      'skip-ant-colony and sk-short',
    ]) {
      expect(scanSecrets(text)).toEqual([]);
    }
  });

  it('claims an Anthropic key as Anthropic, not as an OpenAI key', () => {
    expect(scanSecrets(j('sk-ant-', 'api03-', 'q'.repeat(30))).map((f) => f.kind)).toEqual(['anthropic_key']);
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
