/**
 * Secret scanning for everything that leaves the gateway. Patterns follow the providers' documented
 * token formats (the same shapes gitleaks and GitHub secret scanning look for); each finding names
 * its kind, never its value. Pinned by secrets.test.ts, one row per kind.
 */

export type SecretKind =
  | 'private_key'
  | 'aws_access_key'
  | 'gcp_api_key'
  | 'gcp_service_account'
  | 'azure_key'
  | 'github_token'
  | 'slack_token'
  | 'anthropic_key'
  | 'openai_key'
  | 'jwt'
  | 'password_assignment'
  | 'bearer_token';

interface Pattern {
  kind: SecretKind;
  re: RegExp;
  /** The capture group that holds the secret (the rest is context, such as `password=`). */
  group?: number;
}

// Order matters: a more specific kind (sk-ant-) must claim its span before a general one (sk-).
const PATTERNS: Pattern[] = [
  {
    kind: 'private_key',
    re: /-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)/g,
  },
  { kind: 'aws_access_key', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { kind: 'gcp_api_key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'gcp_service_account', re: /"private_key_id"\s*:\s*"[0-9a-f]{40}"/g },
  { kind: 'azure_key', re: /\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})/g, group: 1 },
  { kind: 'azure_key', re: /\b[0-9A-Za-z]{3}8Q~[0-9A-Za-z_~.-]{31,34}\b/g },
  { kind: 'github_token', re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g },
  { kind: 'github_token', re: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g },
  { kind: 'slack_token', re: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g },
  { kind: 'anthropic_key', re: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: 'openai_key', re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: 'jwt', re: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g },
  {
    kind: 'password_assignment',
    re: /\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b["']?\s*[:=]\s*["']?([^\s"',;]{4,})/gi,
    group: 1,
  },
  { kind: 'bearer_token', re: /\bBearer\s+([A-Za-z0-9._~+/=-]{20,})/g, group: 1 },
];

export interface SecretFinding {
  kind: SecretKind;
  start: number;
  end: number;
}

/** Shannon entropy in bits per character: a bearer value below this is a word, not a token. */
const BEARER_MIN_ENTROPY = 3.5;

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Every secret-looking span in `text`, non-overlapping, in order. */
export function scanSecrets(text: string): SecretFinding[] {
  const found: SecretFinding[] = [];
  const overlaps = (s: number, e: number) => found.some((f) => s < f.end && e > f.start);
  for (const p of PATTERNS) {
    for (const m of text.matchAll(p.re)) {
      const value = p.group ? m[p.group] : m[0];
      if (value === undefined || m.index === undefined) continue;
      const start = p.group ? m.index + m[0].lastIndexOf(value) : m.index;
      const end = start + value.length;
      if (p.kind === 'bearer_token' && entropy(value) < BEARER_MIN_ENTROPY) continue;
      if (overlaps(start, end)) continue;
      found.push({ kind: p.kind, start, end });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** Replaces each finding with `[redacted:<kind>]`. */
export function maskSecrets(text: string, findings = scanSecrets(text)): string {
  let out = '';
  let at = 0;
  for (const f of findings) {
    out += `${text.slice(at, f.start)}[redacted:${f.kind}]`;
    at = f.end;
  }
  return out + text.slice(at);
}
