import type { SecretKind } from './secrets.js';

// Built from pieces so the repository itself never holds a token-shaped string a scanner would flag.
export const j = (...parts: string[]) => parts.join('');
/** One or more samples per kind, each embedded in a line of text by the tests that use it. */
export const SECRET_SAMPLES: [SecretKind, string][] = [
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
  ['aws_secret_key', j('aws_secret_access_key = ', 'wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY')],
  ['password_assignment', 'db password=hunter2xyz'],
  ['password_assignment', 'secret: s3cr3t-value'],
  ['bearer_token', j('Authorization: Bearer ', 'aZ3kP9qL2mX7vR4tY8wN1bC6')],
  ['basic_auth', j('Authorization: Basic ', 'YWRtaW46aHVudGVyMmJhc2lj')],
  ['url_credentials', j('postgres://app:', 'S3cr3t-pw', '@db.internal:5432/app')],
];

/** A deterministic generator, so a failing sample is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(22);
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const B64 = `${ALNUM}+/`;
/** `n` characters of `alphabet`, as a provider's generator would draw them. */
export const draw = (alphabet: string, n: number) =>
  Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');

/** A random UUID in the 8-4-4-4-12 hex form (drawn in order, so the corpus stays the same). */
const uuid = () =>
  j(draw(HEX, 8), '-', draw(HEX, 4), '-', draw(HEX, 4), '-', draw(HEX, 4), '-', draw(HEX, 12));

/**
 * One token per documented shape, written from each provider's format (and the gitleaks rule that
 * encodes it, named beside it), with random bodies: `[kind, gitleaks rule ids, token]`. Built from
 * pieces at run time, so this file holds no token-shaped string.
 */
export const PROVIDER_TOKENS: readonly [SecretKind, string, string][] = [
  [
    'gitlab_token',
    'gitlab-runner-authentication-token-routable',
    j('glrt-', 't1_', draw(`${ALNUM}_-`, 30), '.', draw(LOWER + DIGITS, 9)),
  ],
  ['gitlab_token', 'gitlab-feed-token', j('glft-', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-incoming-mail-token', j('glimt-', draw(`${ALNUM}_-`, 25))],
  ['gitlab_token', 'gitlab-kubernetes-agent-token', j('glagent-', draw(`${ALNUM}_-`, 50))],
  ['gitlab_token', 'gitlab-scim-token', j('glsoat-', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-feature-flag-client-token', j('glffct-', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-rrt', j('GR1348941', draw(`${ALNUM}_-`, 20))],
  [
    'aws_bedrock_key',
    'aws-amazon-bedrock-api-key-short-lived',
    j('bedrock-api-key-', 'YmVkcm9jay5hbWF6b25hd3MuY29t', draw(B64, 60)),
  ],
  ['gitlab_token', 'gitlab-pat-routable', j('glpat-', draw(`${ALNUM}_-`, 40), '.', draw(LOWER + DIGITS, 9))],
  [
    'slack_token',
    'slack-legacy-token',
    j('xoxs-', draw(DIGITS, 10), '-', draw(DIGITS, 10), '-', draw(DIGITS, 10), '-', draw(HEX, 64)),
  ],
  ['slack_token', 'slack-legacy-workspace-token', j('xoxa-', '2-', draw(ALNUM, 40))],
  ['slack_token', 'slack-legacy-bot-token', j('xoxb-', draw(DIGITS, 10), '-', draw(ALNUM, 24))],
  ['slack_token', 'slack-config-refresh-token', j('xoxe-', '1-', draw(UPPER + DIGITS, 146))],
  ['digitalocean_token', 'digitalocean-access-token', j('doo_', 'v1_', draw(HEX, 64))],
  ['shopify_token', 'shopify-custom-access-token', j('shpca_', draw(HEX, 32))],
  ['shopify_token', 'shopify-private-app-access-token', j('shppa_', draw(HEX, 32))],
  ['hashicorp_token', 'vault-batch-token', j('hvb.', draw(`${ALNUM}_-`, 140))],
  ['grafana_token', 'grafana-api-key', j('eyJrIjoi', draw(ALNUM, 80))],
  ['aws_access_key', 'aws-access-token', j('AKIA', draw(`${UPPER}234567`, 16))],
  ['aws_access_key', 'aws-access-token', j('ASIA', draw(`${UPPER}234567`, 16))],
  ['aws_access_key', 'aws-access-token', j('ABIA', draw(`${UPPER}234567`, 16))],
  ['aws_access_key', 'aws-access-token', j('ACCA', draw(`${UPPER}234567`, 16))],
  ['aws_bedrock_key', 'aws-amazon-bedrock-api-key-long-lived', j('ABSK', draw(B64, 132))],
  ['gcp_api_key', 'gcp-api-key', j('AIza', draw(`${ALNUM}_-`, 34), '-')],
  ['gcp_api_key', 'gcp-api-key', j('AIza', draw(`${ALNUM}_-`, 34), '_')],
  ['gcp_oauth_token', '', j('ya29', '.', draw(`${ALNUM}_-`, 120))],
  ['azure_key', 'azure-ad-client-secret', j(draw(ALNUM, 3), '8Q~', draw(`${ALNUM}_~.-`, 34))],
  ['github_token', 'github-pat', j('ghp_', draw(ALNUM, 36))],
  ['github_token', 'github-oauth', j('gho_', draw(ALNUM, 36))],
  ['github_token', 'github-app-token', j('ghs_', draw(ALNUM, 36))],
  ['github_token', 'github-app-token', j('ghu_', draw(ALNUM, 36))],
  ['github_token', 'github-refresh-token', j('ghr_', draw(ALNUM, 36))],
  ['github_token', 'github-fine-grained-pat', j('github_pat_', draw(`${ALNUM}_`, 82))],
  ['gitlab_token', 'gitlab-pat', j('glpat-', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-ptt', j('glptt-', draw(HEX, 40))],
  ['gitlab_token', 'gitlab-deploy-token', j('gldt-', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-runner-authentication-token', j('glrt-', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-cicd-job-token', j('glcbt-', draw(ALNUM, 3), '_', draw(`${ALNUM}_-`, 20))],
  ['gitlab_token', 'gitlab-oauth-app-secret', j('gloas-', draw(`${ALNUM}_-`, 64))],
  [
    'slack_token',
    'slack-bot-token',
    j('xoxb-', draw(DIGITS, 12), '-', draw(DIGITS, 13), '-', draw(ALNUM, 24)),
  ],
  [
    'slack_token',
    'slack-user-token',
    j('xoxp-', draw(DIGITS, 12), '-', draw(DIGITS, 12), '-', draw(DIGITS, 12), '-', draw(HEX, 32)),
  ],
  [
    'slack_token',
    'slack-app-token',
    j('xapp-1-', draw(UPPER + DIGITS, 11), '-', draw(DIGITS, 13), '-', draw(HEX, 64)),
  ],
  ['slack_token', 'slack-config-access-token', j('xoxe.xoxp-1-', draw(UPPER + DIGITS, 164))],
  [
    'chat_webhook',
    'slack-webhook-url',
    j(
      'https://hooks.slack',
      '.com/services/T',
      draw(UPPER + DIGITS, 8),
      '/B',
      draw(UPPER + DIGITS, 10),
      '/',
      draw(ALNUM, 24),
    ),
  ],
  [
    'chat_webhook',
    'microsoft-teams-webhook',
    j(
      'https://acme.webhook.office',
      '.com/webhookb2/',
      uuid(),
      '@',
      uuid(),
      '/IncomingWebhook/',
      draw(HEX, 32),
      '/',
      uuid(),
    ),
  ],
  [
    'chat_webhook',
    '',
    j('https://discord', '.com/api/webhooks/', draw(DIGITS, 19), '/', draw(`${ALNUM}_-`, 68)),
  ],
  ['chat_webhook', '', j('https://open.feishu', '.cn/open-apis/bot/v2/hook/', uuid())],
  ['telegram_bot_token', 'telegram-bot-api-token', j(draw(DIGITS, 10), ':AA', draw(`${ALNUM}_-`, 33))],
  ['anthropic_key', 'anthropic-api-key', j('sk-ant-', 'api03-', draw(`${ALNUM}_-`, 93), 'AA')],
  ['anthropic_key', 'anthropic-admin-api-key', j('sk-ant-', 'admin01-', draw(`${ALNUM}_-`, 93), 'AA')],
  [
    'openai_key',
    'openai-api-key',
    j('sk-', 'proj-', draw(`${ALNUM}_-`, 74), 'T3BlbkFJ', draw(`${ALNUM}_-`, 74)),
  ],
  ['openai_key', 'openai-api-key', j('sk-', draw(ALNUM, 20), 'T3BlbkFJ', draw(ALNUM, 20))],
  ['groq_key', '', j('gsk_', draw(ALNUM, 52))],
  ['xai_key', '', j('xai-', draw(ALNUM, 80))],
  ['perplexity_key', 'perplexity-api-key', j('pplx-', draw(ALNUM, 48))],
  ['huggingface_token', 'huggingface-access-token', j('hf_', draw(UPPER + LOWER, 34))],
  ['huggingface_token', 'huggingface-organization-api-token', j('api_org_', draw(UPPER + LOWER, 34))],
  ['stripe_key', 'stripe-access-token', j('sk_', 'live_', draw(ALNUM, 24))],
  ['stripe_key', 'stripe-access-token', j('rk_', 'test_', draw(ALNUM, 24))],
  ['webhook_secret', '', j('whsec_', draw(B64, 32))],
  ['npm_token', 'npm-access-token', j('npm_', draw(ALNUM, 36))],
  ['pypi_token', 'pypi-upload-token', j('pypi-', 'AgEIcHlwaS5vcmc', draw(`${ALNUM}_-`, 70))],
  ['sendgrid_key', 'sendgrid-api-token', j('SG.', draw(`${ALNUM}_-`, 22), '.', draw(`${ALNUM}_-`, 43))],
  ['twilio_key', 'twilio-api-key', j('SK', draw(HEX, 32))],
  ['digitalocean_token', 'digitalocean-pat', j('dop_', 'v1_', draw(HEX, 64))],
  ['digitalocean_token', 'digitalocean-refresh-token', j('dor_', 'v1_', draw(HEX, 64))],
  ['shopify_token', 'shopify-access-token', j('shpat_', draw(HEX, 32))],
  ['shopify_token', 'shopify-shared-secret', j('shpss_', draw(HEX, 32))],
  ['heroku_key', 'heroku-api-key-v2', j('HRKU-', 'AA', draw(`${ALNUM}_-`, 58))],
  ['databricks_token', 'databricks-api-token', j('dapi', draw(HEX, 32))],
  [
    'hashicorp_token',
    'hashicorp-tf-api-token',
    j(draw(LOWER + DIGITS, 14), '.atlasv1.', draw(`${LOWER}${DIGITS}_-`, 67)),
  ],
  ['hashicorp_token', 'vault-service-token', j('hvs.', draw(`${ALNUM}_-`, 95))],
  ['doppler_token', 'doppler-api-token', j('dp.', 'pt.', draw(ALNUM, 43))],
  ['linear_key', 'linear-api-key', j('lin_', 'api_', draw(ALNUM, 40))],
  ['notion_token', 'notion-api-token', j('ntn_', draw(DIGITS, 11), draw(ALNUM, 35))],
  ['postman_key', 'postman-api-token', j('PMAK-', draw(HEX, 24), '-', draw(HEX, 34))],
  ['pulumi_token', 'pulumi-api-token', j('pul-', draw(HEX, 40))],
  ['grafana_token', 'grafana-service-account-token', j('glsa_', draw(ALNUM, 32), '_', draw(HEX, 8))],
  ['grafana_token', 'grafana-cloud-api-token', j('glc_', draw(B64, 80))],
  ['sentry_token', 'sentry-user-token', j('sntryu_', draw(HEX, 64))],
  [
    'sentry_token',
    'sentry-org-token',
    j('sntrys_', 'eyJpYXQiO', draw(B64, 60), 'LCJyZWdpb25fdXJs', draw(B64, 40), '_', draw(B64, 43)),
  ],
  ['age_key', 'age-secret-key', j('AGE-SECRET-', 'KEY-1', draw('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58))],
  ['onepassword_token', '1password-service-account-token', j('ops_', 'eyJ', draw(B64, 260))],
  [
    'onepassword_token',
    '1password-secret-key',
    j(
      'A3-',
      draw(UPPER + DIGITS, 6),
      '-',
      draw(UPPER + DIGITS, 11),
      '-',
      draw(UPPER + DIGITS, 5),
      '-',
      draw(UPPER + DIGITS, 5),
      '-',
      draw(UPPER + DIGITS, 5),
    ),
  ],
  ['jwt', 'jwt', j('eyJhbGciOiJFUzI1NiJ9', '.eyJzdWIiOiJ0c2tfMDEifQ', '.', draw(`${ALNUM}_-`, 86))],
  [
    'private_key',
    'private-key',
    j(
      '-----BEGIN EC ',
      'PRIVATE KEY-----\n',
      draw(B64, 64),
      '\n',
      draw(B64, 40),
      '\n-----END EC ',
      'PRIVATE KEY-----',
    ),
  ],
  [
    'private_key',
    'private-key',
    j(
      '-----BEGIN PGP ',
      'PRIVATE KEY BLOCK-----\n\n',
      draw(B64, 64),
      '\n-----END PGP ',
      'PRIVATE KEY BLOCK-----',
    ),
  ],
];

/** The value of an AWS secret access key: 40 characters of base64 (the docs' example is one). */
export const AWS_SECRET = () => draw(B64, 40);

/**
 * The forms people write a secret in, after the sample forms of gitleaks' rule tests
 * (`cmd/generate/config/utils/generate.go`) plus shells and prose: `{i}` is the identifier, `{s}` the
 * secret. Each is a line an agent may paste into a summary or a Stop message.
 */
export const WRITTEN_FORMS: readonly [string, string][] = [
  ['ini, quoted', '{i}Token="{s}"'],
  ['ini, spaced', '{i}Token = "{s}"'],
  ['ini, bare', '{i}Token={s}'],
  ['ini, bare spaced', '{i}Token = {s}'],
  ['json', '{\n    "{i}_token": "{s}"\n}'],
  ['json in a string', '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}'],
  ['json, escaped', '{\\"{i}_token\\": \\"{s}\\"}'],
  ['xml element', '<{i}Token>\n    {s}\n</{i}Token>'],
  ['yaml', '{i}_token: {s}'],
  ['yaml, single quotes', "{i}_token: '{s}'"],
  ['yaml, double quotes', '{i}_token: "{s}"'],
  ['env', '{I}_TOKEN={s}'],
  ['shell export', 'export {I}_TOKEN="{s}"'],
  ['shell export, single', "export {I}_TOKEN='{s}'"],
  ['dotenv with a comment', '{I}_TOKEN={s} # rotated'],
  ['C#', 'string {i}Token = "{s}";'],
  ['go', 'var {i}Token string = "{s}"'],
  ['go short', '{i}Token := "{s}"'],
  ['go backticks', '{i}Token := `{s}`'],
  ['java', 'String {i}Token = "{s}";'],
  ['php', `${'$'}{i}Token .= "{s}"`],
  ['python', "{i}Token = '{s}'"],
  ['setProperty', 'System.setProperty("{I}_TOKEN", "{s}")'],
  ['logstash', '  "{i}Token" => "{s}"'],
  ['make', '{i}_TOKEN ::= "{s}"'],
  ['make, conditional', '{i}_TOKEN ?= "{s}"'],
  ['cli flag', 'deploy --{i}-token={s} --force'],
  ['http header', 'X-{I}-Token: {s}'],
  ['url query', 'https://api.example.com/v1?{i}_token={s}&page=2'],
  ['prose', 'I used {s} to log in'],
  ['prose, parenthesised', 'the key ({s}) works'],
  ['prose, end of sentence', 'Set it to {s}.'],
  ['markdown code', 'run `{s}` once'],
  ['end of text', 'token {s}'],
];

/** Ways a token is hidden from a pattern but not from a reader: each maps a token to its disguise. */
export const DISGUISES: readonly [string, (s: string) => string][] = [
  ['as typed', (s) => s],
  ['a zero-width space inside', (s) => `${s.slice(0, 6)}\u200b${s.slice(6)}`],
  ['a soft hyphen inside', (s) => `${s.slice(0, 5)}\u00ad${s.slice(5)}`],
  ['a zero-width joiner inside', (s) => `${s.slice(0, 7)}\u200d${s.slice(7)}`],
  ['a word joiner and a BOM inside', (s) => `${s.slice(0, 4)}\u2060${s.slice(4, 9)}\ufeff${s.slice(9)}`],
  ['a zero-width space between every character', (s) => [...s].join('\u200b')],
  ['fullwidth letters', (s) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))],
];
