import { maskSecrets, type SecretKind, scanSecrets } from '../scan/secrets.js';
import { stripMassMentions, truncate } from '../text/index.js';

/**
 * The content gate: the last pure step before a report becomes a message. Everything here is a
 * function of the text and the config, so content.test.ts can pin every rule as a table.
 */

/** CONTRACT.md: `summary` is at most 120 characters. */
export const SUMMARY_MAX_CHARS = 120;

/** Whether `host` is one of `domains` or a subdomain of one (`docs.example.com` under `example.com`). */
export function hostAllowed(host: string, domains: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return domains.some((d) => {
    const dom = d
      .toLowerCase()
      .replace(/^\*?\./, '')
      .replace(/\.$/, '');
    return h === dom || h.endsWith(`.${dom}`);
  });
}

export type ArtifactCheck =
  | { kind: 'ok'; url: string }
  | { kind: 'refused'; reason: 'not_a_url' | 'scheme' | 'domain' | 'credentials' };

/** An artifact link is clickable only when it is https (or http) on an allowed domain, without user info. */
export function checkArtifact(link: string, domains: readonly string[]): ArtifactCheck {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return { kind: 'refused', reason: 'not_a_url' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { kind: 'refused', reason: 'scheme' };
  if (url.username || url.password) return { kind: 'refused', reason: 'credentials' };
  if (!hostAllowed(url.hostname, domains)) return { kind: 'refused', reason: 'domain' };
  return { kind: 'ok', url: url.href };
}

// Schemes and bare hosts a chat client would turn into a link.
const LINK_RE = /\b((?:https?|ftp|file):\/\/[^\s<>"'`]+|www\.[^\s<>"'`]+)/gi;

/** `https://evil.example/x` → `hxxps://evil[.]example/x`: still readable, no longer clickable. */
export function defang(link: string): string {
  const m = /^([a-z]+):\/\/([^/?#]*)(.*)$/i.exec(link);
  if (!m) return link.replace(/\./g, '[.]');
  const scheme = m[1]!.toLowerCase().replace(/^http/, 'hxxp').replace(/^ftp/, 'fxp').replace(/^file/, 'fxle');
  return `${scheme}://${m[2]!.replace(/\./g, '[.]')}${m[3]}`;
}

function linkHost(link: string): string | undefined {
  try {
    return new URL(/^www\./i.test(link) ? `https://${link}` : link).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Links inside free text came from the agent, which read untrusted context (a web page, an issue, a
 * webhook): a phishing link must not become a button on the owner's phone. Links on an allowed domain
 * stay as they are; every other link is defanged.
 */
export function defangLinks(text: string, allowed: readonly string[]): { text: string; defanged: number } {
  let defanged = 0;
  const out = text.replace(LINK_RE, (link) => {
    const host = linkHost(link);
    if (host && /^https?:/i.test(link) && hostAllowed(host, allowed)) return link;
    defanged++;
    return defang(link);
  });
  return { text: out, defanged };
}

export { stripMassMentions };

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replaces internal names with their aliases for external channels. Longest name first, so
 * `acme/payments-api` is replaced before `payments`; matched case-insensitively at word edges.
 */
export function applyAliases(text: string, aliases: Readonly<Record<string, string>>): string {
  const names = Object.keys(aliases).sort((a, b) => b.length - a.length);
  if (names.length === 0) return text;
  const re = new RegExp(`(?<![\\w/.-])(${names.map(escapeRe).join('|')})(?![\\w/-])`, 'gi');
  const lower = new Map(names.map((n) => [n.toLowerCase(), aliases[n]!]));
  return text.replace(re, (m) => lower.get(m.toLowerCase()) ?? m);
}

export interface ContentInput {
  summary: string;
  detail?: string;
  artifact?: string;
}

export interface ContentOptions {
  secrets: 'block' | 'mask';
  allowed_link_domains: readonly string[];
  detail_max_chars: number;
}

export interface ContentRewrites {
  secrets: SecretKind[];
  defanged_links: number;
  mass_mentions: boolean;
  /** Why the artifact was not kept as a link (it is shown defanged in the detail instead). */
  artifact_refused?: Extract<ArtifactCheck, { kind: 'refused' }>['reason'];
  detail_truncated: boolean;
}

export type ContentOutcome =
  | { kind: 'ok'; content: ContentInput; rewrites: ContentRewrites }
  | { kind: 'blocked'; reason: 'secret'; secrets: SecretKind[]; masked: ContentInput };

/** Masks secrets in every field: what the audit log may keep even when the message is blocked. */
export function maskAll(input: ContentInput): ContentInput {
  const out: ContentInput = { summary: maskSecrets(input.summary) };
  if (input.detail !== undefined) out.detail = maskSecrets(input.detail);
  if (input.artifact !== undefined) out.artifact = maskSecrets(input.artifact);
  return out;
}

/**
 * The gate: secrets (block or mask), artifact domain, defanged links, mass mentions, length caps.
 * Secrets are checked first and on the raw text, so no later rewrite can split a token and hide it.
 */
export function gateContent(input: ContentInput, opts: ContentOptions): ContentOutcome {
  const kinds = new Set<SecretKind>();
  for (const text of [input.summary, input.detail ?? '', input.artifact ?? '']) {
    for (const f of scanSecrets(text)) kinds.add(f.kind);
  }
  const secrets = [...kinds];
  if (secrets.length > 0 && opts.secrets === 'block') {
    return { kind: 'blocked', reason: 'secret', secrets, masked: maskAll(input) };
  }
  const masked = secrets.length > 0 ? maskAll(input) : input;
  const rewrites: ContentRewrites = {
    secrets,
    defanged_links: 0,
    mass_mentions: false,
    detail_truncated: false,
  };
  const clean = (text: string): string => {
    const stripped = stripMassMentions(text);
    if (stripped !== text) rewrites.mass_mentions = true;
    const d = defangLinks(stripped, opts.allowed_link_domains);
    rewrites.defanged_links += d.defanged;
    return d.text;
  };
  // Defanging adds characters; the message still promises a summary of at most 120.
  const content: ContentInput = { summary: truncate(clean(masked.summary), SUMMARY_MAX_CHARS, 'chars') };
  let detail = masked.detail !== undefined ? clean(masked.detail) : undefined;
  if (masked.artifact !== undefined) {
    const check = checkArtifact(masked.artifact, opts.allowed_link_domains);
    if (check.kind === 'ok') content.artifact = check.url;
    else {
      rewrites.artifact_refused = check.reason;
      const shown = `artifact (not on an allowed domain): ${defang(masked.artifact)}`;
      detail = detail ? `${detail}\n${shown}` : shown;
    }
  }
  if (detail !== undefined) {
    const cut = truncate(detail, opts.detail_max_chars, 'chars');
    rewrites.detail_truncated = cut !== detail;
    content.detail = cut;
  }
  return { kind: 'ok', content, rewrites };
}
