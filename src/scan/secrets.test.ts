import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldForScan } from './normalize.js';
import { GITLEAKS_RULES_FOLLOWED, TOKEN_RULES } from './rules.js';
import { maskSecrets, scanSecrets } from './secrets.js';
import {
  AWS_SECRET,
  DISGUISES,
  draw,
  j,
  PROVIDER_TOKENS,
  SECRET_SAMPLES as SECRETS,
  WRITTEN_FORMS,
} from './testing.js';

/** Whether `secret` can still be read in `out` by a person or a scanner: after folding, as a substring. */
const survives = (out: string, secret: string) => foldForScan(out).includes(foldForScan(secret));

describe('secret scanning', () => {
  it.each(SECRETS)('finds a %s', (kind, secret) => {
    const found = scanSecrets(`deploy log: ${secret} end`);
    expect(found.map((f) => f.kind)).toContain(kind);
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

describe('provider token shapes (after the gitleaks rules)', () => {
  it.each(PROVIDER_TOKENS)('finds a %s (%s) alone in a line', (kind, _rule, token) => {
    const found = scanSecrets(`here: ${token} end`);
    expect(found.map((f) => f.kind)).toContain(kind);
    expect(survives(maskSecrets(`here: ${token} end`), token)).toBe(false);
  });

  it('covers every kind the detectors have with at least one sample', () => {
    const sampled = new Set([...PROVIDER_TOKENS.map(([k]) => k), ...SECRETS.map(([k]) => k)]);
    const kinds = new Set(TOKEN_RULES.map((r) => r.kind));
    for (const k of kinds) expect(sampled.has(k), k).toBe(true);
  });

  it('samples every gitleaks rule it claims to follow that has a shape of its own', () => {
    const sampled = new Set(PROVIDER_TOKENS.flatMap(([, rule]) => rule.split(' ')));
    // curl's rules are the Basic and -u forms, sampled with the passwords below.
    const shaped = TOKEN_RULES.flatMap((r) => r.gitleaks).filter((id) => !id.startsWith('curl-'));
    for (const id of shaped) expect(sampled.has(id), id).toBe(true);
    expect(GITLEAKS_RULES_FOLLOWED.length).toBeGreaterThan(60);
  });

  it.each([
    ['key = AKIAXXXXXXXXXXXXXXXX', 'a placeholder AWS id of one repeated letter'],
    ['TODAYINASIAASACKOFRICEFELLOVER', 'a longer run of capitals that only contains ASIA'],
    ['msgstr "Näytä asiakirjamallikansio."', 'Finnish prose'],
    ['AKIA in a sentence about AWS key ids', 'the prefix alone'],
  ])('leaves %s alone (%s), as gitleaks does', (text) => {
    expect(scanSecrets(text)).toEqual([]);
  });
});

describe('secrets in the forms people write them', () => {
  const tokens = PROVIDER_TOKENS.filter(([k]) => k !== 'private_key');
  const cases = WRITTEN_FORMS.flatMap(([form, tpl]) =>
    tokens.map(
      ([kind, , token]) =>
        [
          form,
          kind,
          tpl.replaceAll('{i}', 'svc').replaceAll('{I}', 'SVC').replaceAll('{s}', token),
          token,
        ] as const,
    ),
  );

  it(`masks every provider token in every written form (${cases.length} lines)`, () => {
    const missed = cases.filter(([, , line, token]) => survives(maskSecrets(line), token));
    expect(missed.map(([form, kind]) => `${kind} as ${form}`)).toEqual([]);
  });

  it.each(DISGUISES)('masks every provider token with %s, in every written form', (_how, disguise) => {
    const missed = cases.filter(([, , line, token]) => {
      const hidden = line.replace(token, disguise(token));
      return survives(maskSecrets(hidden), token);
    });
    expect(missed.map(([form, kind]) => `${kind} as ${form}`)).toEqual([]);
  });

  const aws = AWS_SECRET();
  it.each([
    `aws_secret_access_key = ${aws}`,
    `aws_secret_access_key=${aws}`,
    `AWS_SECRET_ACCESS_KEY=${aws}`,
    `export AWS_SECRET_ACCESS_KEY="${aws}"`,
    `AWS_SECRET_ACCESS_KEY: ${aws}`,
    `aws_secret_access_key: '${aws}'`,
    `"SecretAccessKey": "${aws}",`,
    `{\\"SecretAccessKey\\": \\"${aws}\\"}`,
    `aws configure set aws_secret_access_key ${aws}`,
    `secret_key = ${aws}`,
    `secretAccessKey: "${aws}"`,
    `Access key ID,Secret access key\n${j('AKIA', 'Q3EXPLQ7WNBZ4C2M')},${aws}`,
  ])('masks an AWS secret access key written as %j', (line) => {
    const out = maskSecrets(line);
    expect(survives(out, aws)).toBe(false);
    expect(out).toContain('[redacted:aws_secret_key]');
  });

  it('masks an AWS secret that ends in / or + (no word boundary after it)', () => {
    for (const end of ['/', '+']) {
      const key = `${aws.slice(0, 39)}${end}`;
      expect(survives(maskSecrets(`aws_secret_access_key = ${key} # prod`), key)).toBe(false);
    }
  });

  // gitleaks rules whose shape is an identifier plus a value: the assignment detector covers them.
  it.each([
    [
      'discord-client-secret',
      'discord_client_secret = "{v}"',
      draw('abcdefghijklmnopqrstuvwxyz0123456789', 32),
    ],
    ['discord-api-token', 'DISCORD_TOKEN={v}', draw('0123456789abcdef', 64)],
    ['cloudflare-api-key', 'cloudflare_api_key: {v}', draw('abcdefghijklmnopqrstuvwxyz0123456789_-', 40)],
    [
      'cohere-api-token',
      'CO_API_KEY={v}',
      draw('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 40),
    ],
    ['mailchimp-api-key', 'mailchimp_api_key = "{v}"', `${draw('0123456789abcdef', 32)}-us12`],
    [
      'okta-access-token',
      'okta_token: {v}',
      `00${draw('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 40)}`,
    ],
    ['sentry-access-token', 'SENTRY_AUTH_TOKEN={v}', draw('0123456789abcdef', 64)],
    [
      'twitter-bearer-token',
      'twitter_bearer_token = "{v}"',
      `${'A'.repeat(22)}${draw('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789%', 90)}`,
    ],
    [
      'generic-api-key',
      'some_api_token_123 = "{v}"',
      draw('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 60),
    ],
    ['generic-api-key', '"credentials" : "{v}"', draw('0123456789abcdef', 64)],
    [
      'generic-api-key',
      'private-key: {v}',
      draw('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=', 100),
    ],
    [
      'generic-api-key',
      'mySecretString={v}',
      draw('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 30),
    ],
  ])('masks a value the gitleaks rule %s describes: %s', (_rule, tpl, value) => {
    expect(survives(maskSecrets(tpl.replace('{v}', value)), value)).toBe(false);
  });

  it.each([
    ['db password=hunter2xyz', 'hunter2xyz'],
    ['DB_PASSWORD: "p@ss w0rd!"', 'p@ss w0rd!'],
    ['PGPASSWORD=Tr0ub4dor3 psql -h db', 'Tr0ub4dor3'],
    ['"password": "correct horse battery staple"', 'correct horse battery staple'],
    ['<password>hunter2!</password>', 'hunter2!'],
    ['--password=s3cr3tpw', 's3cr3tpw'],
    ['$dbPassword = "opensesame42";', 'opensesame42'],
    ['client_secret: 9f8e7d6c5b4a3f2e1d0c', '9f8e7d6c5b4a3f2e1d0c'],
    ['SECRET_KEY_BASE=4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b', '4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b'],
    ['X-Api-Key: 7c1f0b2e9d8a4c3b5e6f', '7c1f0b2e9d8a4c3b5e6f'],
    ['api_key => "k9X2mQ7pL4vR8sT1"', 'k9X2mQ7pL4vR8sT1'],
    ['postgres://app:S3cr3t-pw@db.internal:5432/app', 'S3cr3t-pw'],
    ['redis://:hunter2redis@cache:6379/0', 'hunter2redis'],
    ['https://deploy:pa%40ss%21word@git.example.com/repo.git', 'pa%40ss%21word'],
    ['curl -u admin:hunter2curl https://api.example.com', 'hunter2curl'],
    ['curl --user=admin:hunter2curl https://api.example.com', 'hunter2curl'],
    ['Authorization: Basic YWRtaW46aHVudGVyMmJhc2lj', 'YWRtaW46aHVudGVyMmJhc2lj'],
    ['Authorization: Bearer aZ3kP9qL2mX7vR4tY8wN1bC6', 'aZ3kP9qL2mX7vR4tY8wN1bC6'],
    ['pass\u200bword=hunter2xyz', 'hunter2xyz'],
  ])('masks the password in %j', (line, secret) => {
    expect(survives(maskSecrets(line), secret)).toBe(false);
  });

  it.each([
    'token_count: 123456789',
    'max_tokens: 4096',
    'key_id: abcd1234efgh',
    'password reset link sent to the owner',
    'Password: required',
    'auth: basic',
    'secret_name: prod-db-creds',
    'PWD=/home/me/project',
    'api_url: https://api.example.com/v1',
    'keyboard: us-intl',
    'monkey=banana123',
    'Basic usage is documented in the README',
    'commit 8f3a2c1d9e0b7a6f5c4d3e2b1a0f9e8d7c6b5a4f merged',
    'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'see https://github.com/acme/api/pull/42 and https://example.com/a?b=c',
    'uuid 123e4567-e89b-12d3-a456-426614174000',
    `token: ${'$'}{GITHUB_TOKEN}`,
    'password: <your password>',
    'secret: ****',
    'GITHUB_TOKEN_FILE=/run/secrets/gh',
    'the API key (see the vault) was rotated',
  ])('leaves %j alone', (text) => {
    expect(scanSecrets(text)).toEqual([]);
  });
});

describe('normalising before the scan', () => {
  it('maps a finding back onto the original text, hidden characters included', () => {
    const token = j('ghp_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8');
    const text = `x ${token.slice(0, 8)}\u200b\u00ad${token.slice(8)} y`;
    expect(maskSecrets(text)).toBe('x [redacted:github_token] y');
  });

  it('masks fullwidth and mixed-width tokens, keeping the text around them', () => {
    const token = j('AKIA', 'Q3EXPLQ7WNBZ4C2M');
    const wide = token.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
    expect(maskSecrets(`前 ${wide} 後`)).toBe('前 [redacted:aws_access_key] 後');
  });

  it('never throws and never returns a finding outside the text, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (s) => {
        for (const f of scanSecrets(s)) {
          expect(f.start).toBeGreaterThanOrEqual(0);
          expect(f.end).toBeLessThanOrEqual(s.length);
          expect(f.end).toBeGreaterThan(f.start);
        }
        expect(typeof maskSecrets(s)).toBe('string');
      }),
      { numRuns: 500 },
    );
  });

  it('masks a token wherever it is put in any surrounding text, with any invisible character inside', () => {
    const invisible = fc.constantFrom('\u200b', '\u00ad', '\u200d', '\u2060', '\ufeff', '\u200c', '\u180e');
    fc.assert(
      fc.property(
        fc.constantFrom(...PROVIDER_TOKENS.filter(([k]) => k !== 'private_key')),
        fc.constantFrom(' ', '\n', '"', "'", '(', '=', ': ', '`', '> '),
        fc.constantFrom(' ', '\n', '"', "'", ')', '.', ',', ';', '`'),
        fc.string({ maxLength: 40 }),
        fc.nat(),
        invisible,
        ([, , token], before, after, prose, at, hide) => {
          const cut = 4 + (at % (token.length - 4));
          const hidden = `${token.slice(0, cut)}${hide}${token.slice(cut)}`;
          const text = `${prose}${before}${hidden}${after}${prose}`;
          expect(survives(maskSecrets(text), token)).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
