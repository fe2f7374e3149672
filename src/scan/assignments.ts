import type { SecretKind } from './rules.js';

/**
 * Secrets in the forms people write them: `aws_secret_access_key = …`, `export GITHUB_TOKEN="…"`,
 * `DB_PASSWORD: …`, `"clientSecret": "…"`, `--password=…`, `X-Api-Key: …`, `<password>…</password>`.
 * The shapes follow gitleaks' generic-api-key (identifier, operator, value) and the sample forms its
 * rule tests generate (INI, JSON, YAML, env, Makefile, Go, Python, Java, PHP, logstash); what the value
 * is allowed to be depends on the identifier's last word, because `password: hunter2` is a secret and
 * `token_count: 12` is not.
 */

/**
 * An identifier containing a sensitive word (the last word decides, below), an assignment operator
 * (`=`, `:`, `:=`, `::=`, `?=`, `=>`, `,` as in `setProperty("KEY", "…")`), and a value: quoted
 * (anything to the closing quote) or bare (up to whitespace or punctuation that ends a value in prose,
 * JSON, a URL query or a shell line).
 */
export const ASSIGNMENT = new RegExp(
  String.raw`(?<![\w.-])(-{0,2}(?=[A-Za-z$])\$?[\w.-]{0,80}?(?:pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?|creds|auth(?:orization)?)[\w.-]{0,40}?)` +
    String.raw`(?:\\?["'])?[ \t]*(?:=|:=|::=|:::=|\?=|=>|:|,)[ \t]*` +
    String.raw`(?:\\?"([^"\\\n]{1,300})\\?"|'([^'\n]{1,300})'|` +
    '`([^`\\n]{1,300})`' +
    String.raw`|([^\s"'` +
    '`' +
    String.raw`,;&)\]}<>]{1,300}))`,
  'gi',
);

/** `<password>…</password>` and the like. */
export const ELEMENT =
  /<((?=[A-Za-z])[\w.-]{0,60}?(?:pass(?:word|wd)?|secret|token|key|credentials?))>\s*([^<\s]{4,300})\s*<\/\1>/gi;

export const ASSIGNMENT_KEYWORDS = ['pass', 'pwd', 'secret', 'token', 'key', 'cred', 'auth'] as const;

/** Words an identifier is split into: `aws_secret_access_key`, `SecretAccessKey`, `X-Api-Key`. */
function words(identifier: string): string[] {
  return identifier
    .replace(/^[-$]+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_.-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** Values that stand for a secret rather than being one. */
const PLACEHOLDER =
  /^(?:\$\{?[A-Za-z_][\w.]*\}?|%\(?[\w.]+\)?s?|\{\{.*\}\}|<[^>]*>|\*+|x+|\.+|#+|-+|null|nil|none|undefined|true|false|yes|no|on|off|empty|required|optional|redacted|hidden|masked|secret|password|token|process\.env\.\w+|os\.environ.*|env\(.*\)|\[redacted[^\]]*\]?)$/i;

export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const PASSWORD_WORDS = new Set(['password', 'passwd', 'passphrase', 'pass', 'pwd']);
const SECRET_WORDS = new Set([
  'secret',
  'token',
  'key',
  'apikey',
  'credential',
  'credentials',
  'creds',
  'auth',
  'authorization',
]);
/** Words that end in a sensitive word (`pgpassword`); not `key` or `pass`, which end `monkey` and `bypass`. */
const GLUED = /^[a-z0-9]+(password|passwd|passphrase|secret|token|apikey|credentials?)$/;

/** A word after the sensitive one that makes the name about the secret, not the secret (`token_count`, `key_id`). */
const NOT_SECRET_AFTER =
  /^(?:count|id|ids|name|names|type|length|size|file|path|url|uri|endpoint|version|hash|policy|expiry|expires|ttl|env|enabled|required|method|header|format|rotation|field|label|prompt|reset|hint)$/;

/**
 * What an identifier and its value amount to: a secret of some kind, or nothing. The identifier's last
 * sensitive word decides (`aws_secret_access_key` → key, `secret_key_base` → key), unless a word after
 * it says the name is about the secret (`token_count`, `password_hash`, `key_id`).
 */
export function classifyAssignment(identifier: string, value: string): SecretKind | undefined {
  const w = words(identifier);
  let at = -1;
  for (let i = w.length - 1; i >= 0; i--) {
    // `PGPASSWORD`, `MYSQLPASSWORD`, `apitoken`: a sensitive word glued to a prefix counts too.
    const glued = GLUED.exec(w[i]!)?.[1];
    if (glued) w[i] = glued;
    if (PASSWORD_WORDS.has(w[i]!) || SECRET_WORDS.has(w[i]!)) {
      at = i;
      break;
    }
  }
  if (at < 0 || w.slice(at + 1).some((x) => NOT_SECRET_AFTER.test(x))) return undefined;
  if (PLACEHOLDER.test(value)) return undefined;
  const word = w[at]!;
  // AWS's own spelling in shells, config files and the CLI's JSON: 40 characters of base64.
  if (/secret(?:access)?key/.test(w.join('')) && /^[A-Za-z0-9/+]{40}$/.test(value)) return 'aws_secret_key';
  if (PASSWORD_WORDS.has(word)) {
    // `PWD` alone is the working directory in every env dump; `db_pwd` is a password.
    if ((word === 'pwd' || word === 'pass') && w.length === 1) return undefined;
    return value.length >= 4 ? 'password_assignment' : undefined;
  }
  // A bare `key:` (or `auth:`) is often prose or a lookup name: it needs a long, random-looking value.
  const bare = w.length === 1 && (word === 'key' || word === 'auth' || word === 'authorization');
  if (value.length < (bare ? 16 : 8)) return undefined;
  // Only letters and separators is a word or a name (`auth: basic-bearer`), not a key.
  if (/^[A-Za-z_.\s-]+$/.test(value)) return undefined;
  return entropy(value) >= (bare ? 3.5 : 3) ? 'password_assignment' : undefined;
}
