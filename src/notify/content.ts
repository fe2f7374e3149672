import { type FoundLink, findLinks } from '../scan/links.js';
import { foldForScan } from '../scan/normalize.js';
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

/**
 * An artifact becomes a button: it is kept only when it is `https:` on an allowed domain, without user
 * info. Plain `http:` is refused too (a button to a page anyone on the path can rewrite); it is shown
 * defanged in the detail instead, like every other refused artifact.
 */
export function checkArtifact(link: string, domains: readonly string[]): ArtifactCheck {
  let url: URL;
  try {
    url = new URL(foldForScan(link.trim()));
  } catch {
    return { kind: 'refused', reason: 'not_a_url' };
  }
  if (url.protocol !== 'https:') return { kind: 'refused', reason: 'scheme' };
  if (url.username || url.password) return { kind: 'refused', reason: 'credentials' };
  if (!hostAllowed(url.hostname, domains)) return { kind: 'refused', reason: 'domain' };
  return { kind: 'ok', url: url.href };
}

/** Scheme spellings a reader still recognises but no client links. */
const DEFANGED_SCHEME: Readonly<Record<string, string>> = {
  http: 'hxxp',
  https: 'hxxps',
  ftp: 'fxp',
  ftps: 'fxps',
  file: 'fxle',
};

/**
 * `https://evil.example/x` → `hxxps://evil[.]example/x`, `javascript:alert(1)` → `javascript[:]alert(1)`,
 * `evil.example/reset` → `evil[.]example/reset`, `a@evil.com` → `a@evil[.]com`: still readable, no
 * longer clickable. The link is written out folded (without the invisible characters it may have hidden).
 */
export function defang(link: string): string {
  const folded = foldForScan(link).replace(/[\u3002\uff61]/g, '.');
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(\/\/)?([^/?#]*)(.*)$/s.exec(folded);
  if (!m) return folded.replace(/\./g, '[.]');
  const [, scheme, slashes = '', host = '', rest = ''] = m;
  const dots = (h: string) => h.replace(/\./g, '[.]');
  // A link inside the link (`…?next=https://evil.com`, `javascript:fetch('//evil.com')`) is one too.
  const inner = (s: string) => (s ? defangLinks(s, []).text : s);
  // `//localhost:3000/x` has no dot to defang: its slashes are.
  if (scheme === undefined)
    return `${slashes && !host.includes('.') ? '[//]' : slashes}${dots(host)}${inner(rest)}`;
  const known = DEFANGED_SCHEME[scheme.toLowerCase()];
  if (known && slashes) return `${known}://${dots(host)}${inner(rest)}`;
  // Any other scheme (javascript:, data:, mailto:, slack://, `https:\\host`): the colon is defanged.
  return `${scheme}[:]${slashes}${slashes ? dots(host) : inner(host)}${inner(rest)}`;
}

function allowedLink(link: FoundLink, allowed: readonly string[]): boolean {
  if (!link.host || !hostAllowed(link.host, allowed)) return false;
  if (link.kind === 'email') return true;
  // A bare allowed host (`ci.example.com/run/1`) is opened as http(s) by every client.
  return link.scheme === undefined
    ? !link.text.startsWith('//')
    : link.scheme === 'https' || link.scheme === 'http';
}

/**
 * Links inside free text came from the agent, which read untrusted context (a web page, an issue, a
 * webhook): a phishing link must not become a button on the owner's phone. Links on an allowed domain
 * stay as they are; every other link a reader could click (`src/scan/links.ts` finds them) is defanged.
 */
export function defangLinks(text: string, allowed: readonly string[]): { text: string; defanged: number } {
  let defanged = 0;
  let out = '';
  let at = 0;
  for (const link of findLinks(text)) {
    if (link.start < at || allowedLink(link, allowed)) continue;
    out += text.slice(at, link.start) + defang(text.slice(link.start, link.end));
    at = link.end;
    defanged++;
  }
  return { text: out + text.slice(at), defanged };
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
  for (const text of [input.summary, input.detail, input.artifact]) {
    if (text) for (const f of scanSecrets(text)) kinds.add(f.kind);
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
      // Shown, not linked: every link inside it defanged (an artifact may be markdown or several links).
      const inside = defangLinks(masked.artifact, opts.allowed_link_domains);
      rewrites.defanged_links += inside.defanged;
      const shown = `artifact (not on an allowed domain): ${inside.defanged > 0 ? inside.text : defang(masked.artifact)}`;
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
