/**
 * The detectors, as data: one row per token shape a provider documents, after the gitleaks rule set
 * (`config/gitleaks.toml`; each row names the gitleaks rule ids it follows). Differences from gitleaks,
 * on purpose:
 *
 * - Boundaries are lookarounds on the token's own alphabet, never `\b`: a key that ends in `-` or `_`
 *   (GCP, Slack, Anthropic keys may) has no word boundary after it, and a key right after `_`
 *   (`KEY_AKIA…`) has none before it. `L` and `R` below.
 * - Lengths are open-ended where the provider's may grow: masking a longer token whole beats leaving
 *   its tail visible.
 * - Documentation examples (`AKIAIOSFODNN7EXAMPLE`) are not allow-listed: gitleaks scans repositories,
 *   where they are noise; a gateway masks anything shaped like a key, since an agent cannot tell us
 *   which ones are real.
 *
 * The `key = value` forms (gitleaks' generic-api-key and the provider rules that need an identifier
 * such as `discord_client_secret = …`) are in `assignments.ts`. Tests: secrets.test.ts, one row per
 * rule, in every form `testing.ts` writes secrets in.
 */

export type SecretKind =
  | 'private_key'
  | 'aws_access_key'
  | 'aws_secret_key'
  | 'aws_bedrock_key'
  | 'gcp_api_key'
  | 'gcp_service_account'
  | 'gcp_oauth_token'
  | 'azure_key'
  | 'github_token'
  | 'gitlab_token'
  | 'slack_token'
  | 'chat_webhook'
  | 'telegram_bot_token'
  | 'anthropic_key'
  | 'openai_key'
  | 'groq_key'
  | 'xai_key'
  | 'perplexity_key'
  | 'huggingface_token'
  | 'stripe_key'
  | 'webhook_secret'
  | 'npm_token'
  | 'pypi_token'
  | 'sendgrid_key'
  | 'twilio_key'
  | 'digitalocean_token'
  | 'shopify_token'
  | 'heroku_key'
  | 'databricks_token'
  | 'hashicorp_token'
  | 'doppler_token'
  | 'linear_key'
  | 'notion_token'
  | 'postman_key'
  | 'pulumi_token'
  | 'grafana_token'
  | 'sentry_token'
  | 'age_key'
  | 'onepassword_token'
  | 'jwt'
  | 'url_credentials'
  | 'basic_auth'
  | 'password_assignment'
  | 'bearer_token';

export interface TokenRule {
  kind: SecretKind;
  re: RegExp;
  /** Lower-case strings one of which the text must contain before the pattern runs (gitleaks' keywords). */
  keywords: readonly string[];
  /** The capture group that holds the secret (the rest is context, such as `AccountKey=`). */
  group?: number;
  /** Shannon bits per character the secret must reach: `AKIAXXXXXXXXXXXXXXXX` is a placeholder. */
  minEntropy?: number;
  /** A last look at the secret (Basic credentials must decode to `user:password`). */
  accept?: (secret: string) => boolean;
  /** The gitleaks rule ids this row follows. */
  gitleaks: readonly string[];
}

/** Not preceded by a letter or digit (`_`, `-`, `=`, `/`, `:` and quotes may come before a token). */
const L = '(?<![A-Za-z0-9])';
/** Not followed by a letter, digit or `_`; a trailing `-` is allowed (it is punctuation or the key's last character). */
const R = '(?![A-Za-z0-9_])';

const rx = (source: string, flags = '') => new RegExp(source, `g${flags}`);

function basicDecodes(b64: string): boolean {
  try {
    const text = Buffer.from(b64, 'base64').toString('utf8');
    return /^[\x21-\x7e]{1,200}:[\x20-\x7e]{1,200}$/.test(text);
  } catch {
    return false;
  }
}

// Order matters: a more specific kind (sk-ant-) must claim its span before a general one (sk-).
export const TOKEN_RULES: readonly TokenRule[] = [
  {
    kind: 'private_key',
    re: rx(
      '-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\\s\\S]*?(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|$)',
      'i',
    ),
    keywords: ['-----begin'],
    gitleaks: ['private-key'],
  },
  {
    kind: 'aws_access_key',
    re: rx(`${L}(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])`),
    keywords: ['akia', 'asia', 'abia', 'acca', 'a3t'],
    minEntropy: 3,
    gitleaks: ['aws-access-token'],
  },
  {
    // The CSV the IAM console offers and `aws configure list`-like output: the id, then its secret.
    kind: 'aws_secret_key',
    re: rx(`${L}(?:AKIA|ASIA)[A-Z0-9]{16}[\\s,;:|"']+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`),
    keywords: ['akia', 'asia'],
    group: 1,
    minEntropy: 3.5,
    gitleaks: [],
  },
  {
    // `aws_secret_access_key = …`, `AWS_SECRET_ACCESS_KEY: …`, `"SecretAccessKey": "…"`, and the
    // space-separated `aws configure set aws_secret_access_key …`: the most common way one appears.
    kind: 'aws_secret_key',
    re: rx(
      String.raw`(?<![A-Za-z0-9])(?:aws[_.-]?)?secret[_.-]?(?:access[_.-]?)?key["'\\]*(?:\s*(?:=|:=|:|=>)\s*|\s+)["'\\]*([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
      'i',
    ),
    keywords: ['secret'],
    group: 1,
    minEntropy: 3,
    gitleaks: [],
  },
  {
    kind: 'aws_bedrock_key',
    re: rx(
      `${L}(?:ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=&%-]*)`,
    ),
    keywords: ['absk', 'bedrock-api-key-'],
    minEntropy: 3,
    gitleaks: ['aws-amazon-bedrock-api-key-long-lived', 'aws-amazon-bedrock-api-key-short-lived'],
  },
  {
    kind: 'gcp_api_key',
    re: rx(`${L}AIza[\\w-]{35}${R}`),
    keywords: ['aiza'],
    minEntropy: 3.5,
    gitleaks: ['gcp-api-key'],
  },
  {
    kind: 'gcp_service_account',
    re: rx('"private_key_id"\\s*:\\s*"[0-9a-f]{40}"'),
    keywords: ['private_key_id'],
    gitleaks: [],
  },
  {
    kind: 'gcp_oauth_token',
    re: rx(`${L}ya29\\.[\\w-]{30,}`),
    keywords: ['ya29.'],
    minEntropy: 3.5,
    gitleaks: [],
  },
  {
    kind: 'azure_key',
    re: rx('(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})', 'i'),
    keywords: ['accountkey', 'sharedaccesskey'],
    group: 1,
    gitleaks: [],
  },
  {
    kind: 'azure_key',
    re: rx('(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~-])'),
    keywords: ['q~'],
    minEntropy: 3,
    gitleaks: ['azure-ad-client-secret'],
  },
  {
    kind: 'github_token',
    re: rx(`${L}(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}${R}`),
    keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    gitleaks: ['github-pat', 'github-oauth', 'github-app-token', 'github-refresh-token'],
  },
  {
    kind: 'github_token',
    re: rx(`${L}github_pat_[A-Za-z0-9_]{22,255}${R}`),
    keywords: ['github_pat_'],
    gitleaks: ['github-fine-grained-pat'],
  },
  {
    kind: 'gitlab_token',
    re: rx(`${L}(?:gl(?:pat|ptt|dt|rt|cbt|ft|imt|agent|oas|soat|ffct)-[\\w.-]{20,}|GR1348941[\\w-]{20,})`),
    keywords: [
      'glpat-',
      'glptt-',
      'gldt-',
      'glrt-',
      'glcbt-',
      'glft-',
      'glimt-',
      'glagent-',
      'gloas-',
      'glsoat-',
      'glffct-',
      'gr1348941',
    ],
    minEntropy: 3,
    gitleaks: [
      'gitlab-pat',
      'gitlab-pat-routable',
      'gitlab-ptt',
      'gitlab-deploy-token',
      'gitlab-runner-authentication-token',
      'gitlab-runner-authentication-token-routable',
      'gitlab-cicd-job-token',
      'gitlab-feed-token',
      'gitlab-incoming-mail-token',
      'gitlab-kubernetes-agent-token',
      'gitlab-oauth-app-secret',
      'gitlab-scim-token',
      'gitlab-feature-flag-client-token',
      'gitlab-rrt',
    ],
  },
  {
    kind: 'slack_token',
    re: rx(
      `${L}(?:xox[abeoprs]-[A-Za-z0-9-]{10,}|xoxe\\.xox[bp]-\\d-[A-Za-z0-9]{100,}|xapp-\\d-[A-Za-z0-9]+-\\d+-[A-Za-z0-9]+)`,
    ),
    keywords: ['xox', 'xapp-'],
    minEntropy: 2,
    gitleaks: [
      'slack-bot-token',
      'slack-user-token',
      'slack-app-token',
      'slack-config-access-token',
      'slack-config-refresh-token',
      'slack-legacy-token',
      'slack-legacy-bot-token',
      'slack-legacy-workspace-token',
    ],
  },
  {
    // Incoming-webhook URLs carry their token in the path: whoever has one can post as the bot.
    kind: 'chat_webhook',
    re: rx(
      [
        'hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}',
        'discord(?:app)?\\.com/api/webhooks/\\d+/[\\w-]{20,}',
        '[a-z0-9-]+\\.webhook\\.office\\.com/webhookb2/[\\w@/-]{40,}',
        'open\\.(?:feishu\\.cn|larksuite\\.com)/open-apis/bot/v2/hook/[\\w-]{20,}',
      ].join('|'),
      'i',
    ),
    keywords: ['hooks.slack.com', '/api/webhooks/', 'webhook.office.com', '/bot/v2/hook/'],
    gitleaks: ['slack-webhook-url', 'microsoft-teams-webhook'],
  },
  {
    // `123456789:AA…` alone or inside `api.telegram.org/bot<token>/sendMessage`.
    kind: 'telegram_bot_token',
    re: rx('(?:(?<=bot)|(?<![A-Za-z0-9_:]))\\d{5,16}:A[A-Za-z0-9_-]{32,40}(?![A-Za-z0-9_-])'),
    keywords: [':a'],
    minEntropy: 3,
    gitleaks: ['telegram-bot-api-token'],
  },
  {
    kind: 'anthropic_key',
    re: rx(`${L}sk-ant-[A-Za-z0-9_-]{20,}`),
    keywords: ['sk-ant-'],
    gitleaks: ['anthropic-api-key', 'anthropic-admin-api-key'],
  },
  {
    kind: 'openai_key',
    re: rx(`${L}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`),
    keywords: ['sk-'],
    minEntropy: 3,
    gitleaks: ['openai-api-key'],
  },
  {
    kind: 'groq_key',
    re: rx(`${L}gsk_[A-Za-z0-9]{40,}${R}`),
    keywords: ['gsk_'],
    minEntropy: 3,
    gitleaks: [],
  },
  {
    kind: 'xai_key',
    re: rx(`${L}xai-[A-Za-z0-9]{60,}${R}`),
    keywords: ['xai-'],
    minEntropy: 3,
    gitleaks: [],
  },
  {
    kind: 'perplexity_key',
    re: rx(`${L}pplx-[A-Za-z0-9]{40,}${R}`),
    keywords: ['pplx-'],
    minEntropy: 3,
    gitleaks: ['perplexity-api-key'],
  },
  {
    kind: 'huggingface_token',
    re: rx(`${L}(?:hf_|api_org_)[A-Za-z0-9]{34,40}${R}`),
    keywords: ['hf_', 'api_org_'],
    minEntropy: 3,
    gitleaks: ['huggingface-access-token', 'huggingface-organization-api-token'],
  },
  {
    kind: 'stripe_key',
    re: rx(`${L}(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}${R}`),
    keywords: ['sk_test', 'sk_live', 'sk_prod', 'rk_test', 'rk_live', 'rk_prod'],
    minEntropy: 2,
    gitleaks: ['stripe-access-token'],
  },
  {
    // Standard Webhooks and Stripe signing secrets (ours are `whsec_` too).
    kind: 'webhook_secret',
    re: rx(`${L}whsec_[A-Za-z0-9+/=]{24,}`),
    keywords: ['whsec_'],
    minEntropy: 3,
    gitleaks: [],
  },
  {
    kind: 'npm_token',
    re: rx(`${L}npm_[A-Za-z0-9]{36}${R}`, 'i'),
    keywords: ['npm_'],
    minEntropy: 2,
    gitleaks: ['npm-access-token'],
  },
  {
    kind: 'pypi_token',
    re: rx('pypi-AgEIcHlwaS5vcmc[\\w-]{50,}'),
    keywords: ['pypi-ageichlwas5vcmc'],
    gitleaks: ['pypi-upload-token'],
  },
  {
    kind: 'sendgrid_key',
    re: rx(`${L}SG\\.[\\w-]{22}\\.[\\w-]{43}(?![\\w-])`),
    keywords: ['sg.'],
    minEntropy: 2,
    gitleaks: ['sendgrid-api-token'],
  },
  {
    kind: 'twilio_key',
    re: rx(`${L}SK[0-9a-fA-F]{32}${R}`),
    keywords: ['sk'],
    minEntropy: 3,
    gitleaks: ['twilio-api-key'],
  },
  {
    kind: 'digitalocean_token',
    re: rx(`${L}do[opr]_v1_[a-f0-9]{64}${R}`, 'i'),
    keywords: ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    minEntropy: 3,
    gitleaks: ['digitalocean-pat', 'digitalocean-access-token', 'digitalocean-refresh-token'],
  },
  {
    kind: 'shopify_token',
    re: rx(`${L}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}${R}`),
    keywords: ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    minEntropy: 2,
    gitleaks: [
      'shopify-access-token',
      'shopify-custom-access-token',
      'shopify-private-app-access-token',
      'shopify-shared-secret',
    ],
  },
  {
    kind: 'heroku_key',
    re: rx(`${L}HRKU-AA[0-9a-zA-Z_-]{58}`),
    keywords: ['hrku-aa'],
    minEntropy: 3.5,
    gitleaks: ['heroku-api-key-v2'],
  },
  {
    kind: 'databricks_token',
    re: rx(`${L}dapi[a-f0-9]{32}(?:-\\d)?${R}`),
    keywords: ['dapi'],
    minEntropy: 3,
    gitleaks: ['databricks-api-token'],
  },
  {
    kind: 'hashicorp_token',
    re: rx(`${L}(?:[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}|hv[sbr]\\.[\\w-]{24,})`),
    keywords: ['atlasv1', 'hvs.', 'hvb.', 'hvr.'],
    minEntropy: 3.5,
    gitleaks: ['hashicorp-tf-api-token', 'vault-service-token', 'vault-batch-token'],
  },
  {
    kind: 'doppler_token',
    re: rx(`${L}dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}${R}`),
    keywords: ['dp.'],
    minEntropy: 2,
    gitleaks: ['doppler-api-token'],
  },
  {
    kind: 'linear_key',
    re: rx(`${L}lin_(?:api|oauth)_[A-Za-z0-9]{40}${R}`),
    keywords: ['lin_api_', 'lin_oauth_'],
    minEntropy: 2,
    gitleaks: ['linear-api-key'],
  },
  {
    kind: 'notion_token',
    re: rx(`${L}(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})${R}`),
    keywords: ['ntn_', 'secret_'],
    minEntropy: 3.5,
    gitleaks: ['notion-api-token'],
  },
  {
    kind: 'postman_key',
    re: rx(`${L}PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}${R}`),
    keywords: ['pmak-'],
    minEntropy: 3,
    gitleaks: ['postman-api-token'],
  },
  {
    kind: 'pulumi_token',
    re: rx(`${L}pul-[a-f0-9]{40}${R}`),
    keywords: ['pul-'],
    minEntropy: 2,
    gitleaks: ['pulumi-api-token'],
  },
  {
    kind: 'grafana_token',
    re: rx(
      `${L}(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})${R}`,
    ),
    keywords: ['glsa_', 'glc_', 'eyjrijoi'],
    minEntropy: 3,
    gitleaks: ['grafana-service-account-token', 'grafana-cloud-api-token', 'grafana-api-key'],
  },
  {
    kind: 'sentry_token',
    re: rx(`${L}sntry[us]_[A-Za-z0-9+/=_]{40,}`),
    keywords: ['sntryu_', 'sntrys_'],
    minEntropy: 3.5,
    gitleaks: ['sentry-user-token', 'sentry-org-token'],
  },
  {
    kind: 'age_key',
    re: rx('AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}'),
    keywords: ['age-secret-key-1'],
    gitleaks: ['age-secret-key'],
  },
  {
    kind: 'onepassword_token',
    re: rx(
      `${L}(?:ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}${R})`,
    ),
    keywords: ['ops_', 'a3-'],
    minEntropy: 3.5,
    gitleaks: ['1password-service-account-token', '1password-secret-key'],
  },
  {
    kind: 'jwt',
    re: rx(`${L}eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{10,}`),
    keywords: ['eyj'],
    gitleaks: ['jwt'],
  },
  {
    // scheme://user:password@host — a database URL, a git remote, a proxy setting. The password only.
    kind: 'url_credentials',
    re: rx(
      '\\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\\s:/?#@"\'<>]*:([^\\s/?#@"\'<>]{1,200})@(?=[^\\s/?#@"\'<>])',
    ),
    keywords: ['://'],
    gitleaks: [],
  },
  {
    kind: 'basic_auth',
    re: rx('\\bBasic\\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])'),
    keywords: ['basic'],
    group: 1,
    accept: basicDecodes,
    gitleaks: ['curl-auth-header'],
  },
  {
    // curl -u user:password, --user=user:password.
    kind: 'basic_auth',
    re: rx('(?:^|\\s)(?:-u|--user)(?:=|\\s+)["\']?[^\\s:"\']{1,100}:([^\\s"\']{3,200})'),
    keywords: ['-u', '--user'],
    group: 1,
    gitleaks: ['curl-auth-user'],
  },
  {
    kind: 'bearer_token',
    re: rx('\\bBearer\\s+([A-Za-z0-9._~+/=-]{20,})'),
    keywords: ['bearer'],
    group: 1,
    minEntropy: 3.5,
    gitleaks: ['curl-auth-header'],
  },
];

/** Every gitleaks rule id some detector here follows (the report and docs/security.md list them). */
export const GITLEAKS_RULES_FOLLOWED: readonly string[] = [
  ...new Set(TOKEN_RULES.flatMap((r) => r.gitleaks)),
  'generic-api-key',
  'discord-client-secret',
  'discord-api-token',
  'cohere-api-token',
  'cloudflare-api-key',
  'mailchimp-api-key',
  'okta-access-token',
  'sentry-access-token',
  'twitter-bearer-token',
].sort();
