import { ASSIGNMENT, ASSIGNMENT_KEYWORDS, classifyAssignment, ELEMENT, entropy } from './assignments.js';
import { scanText } from './normalize.js';
import { type SecretKind, TOKEN_RULES } from './rules.js';

/**
 * Secret scanning for everything that leaves the gateway or enters its log. The text is first read
 * as a scanner must (`normalize.ts`: invisible characters stripped, NFKC), then matched against the
 * provider token shapes (`rules.ts`, after gitleaks) and the `key = value` forms people write secrets
 * in (`assignments.ts`). Each finding names its kind, never its value, and is given in offsets of the
 * original text, so a mask covers the token and anything hidden inside it. Hand-written rules over a
 * detector library: see docs/security.md ("Secrets") for what was weighed.
 */

export type { SecretKind } from './rules.js';

export interface SecretFinding {
  kind: SecretKind;
  start: number;
  end: number;
}

/** The secret's span inside a match: the capture group when there is one, else the whole match. */
function span(m: RegExpMatchArray, group: number | undefined): [number, number, string] | undefined {
  if (m.index === undefined) return undefined;
  if (!group) return [m.index, m.index + m[0].length, m[0]];
  const value = m[group];
  if (value === undefined) return undefined;
  const start = m.index + m[0].lastIndexOf(value);
  return [start, start + value.length, value];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ALL_KEYWORDS = [...new Set([...TOKEN_RULES.flatMap((r) => r.keywords), ...ASSIGNMENT_KEYWORDS])].sort(
  (a, b) => b.length - a.length,
);
/**
 * One pass over the text finds every keyword present (gitleaks' prefilter), so a rule runs only when
 * one of its own is: a zero-width lookahead tries every position, longest keyword first.
 */
const KEYWORD_RE = new RegExp(`(?=(${ALL_KEYWORDS.map(escapeRe).join('|')}))`, 'g');

function keywordsIn(lower: string): Set<string> {
  const hits = new Set<string>();
  for (const m of lower.matchAll(KEYWORD_RE)) hits.add(m[1]!);
  if (hits.size === 0) return hits;
  // A shorter keyword at the same position (`sk-` under `sk-ant-`) is inside the longer one found there.
  const found = [...hits];
  for (const k of ALL_KEYWORDS) if (!hits.has(k) && found.some((h) => h.includes(k))) hits.add(k);
  return hits;
}

/** Every secret-looking span in `text`, non-overlapping, in order of position. */
export function scanSecrets(text: string): SecretFinding[] {
  const view = scanText(text);
  const t = view.text;
  const hits = keywordsIn(t.toLowerCase());
  // Every rule and the assignment forms run only on one of their keywords: with none, none can match.
  if (hits.size === 0) return [];
  const found: SecretFinding[] = [];
  const overlaps = (s: number, e: number) => found.some((f) => s < f.end && e > f.start);
  const add = (kind: SecretKind, s: number, e: number) => {
    if (!overlaps(s, e)) found.push({ kind, start: s, end: e });
  };

  for (const rule of TOKEN_RULES) {
    if (!rule.keywords.some((k) => hits.has(k))) continue;
    for (const m of t.matchAll(rule.re)) {
      const at = span(m, rule.group);
      if (!at) continue;
      const [s, e, secret] = at;
      if (rule.minEntropy !== undefined && entropy(secret) < rule.minEntropy) continue;
      if (rule.accept && !rule.accept(secret)) continue;
      add(rule.kind, s, e);
    }
  }
  if (ASSIGNMENT_KEYWORDS.some((k) => hits.has(k))) {
    for (const m of t.matchAll(ASSIGNMENT)) {
      const value = m[2] ?? m[3] ?? m[4] ?? m[5];
      if (value === undefined || m.index === undefined) continue;
      const kind = classifyAssignment(m[1]!, value.trim());
      if (!kind) continue;
      const s = m.index + m[0].lastIndexOf(value);
      add(kind, s, s + value.length);
    }
    for (const m of t.matchAll(ELEMENT)) {
      const kind = classifyAssignment(m[1]!, m[2]!);
      if (!kind || m.index === undefined) continue;
      const s = m.index + m[0].indexOf(m[2]!, m[1]!.length + 2);
      add(kind, s, s + m[2]!.length);
    }
  }
  return found
    .map((f) => ({ kind: f.kind, start: view.toOriginal(f.start), end: view.toOriginal(f.end, true) }))
    .sort((a, b) => a.start - b.start);
}

/** Replaces each finding with `[redacted:<kind>]`. */
export function maskSecrets(text: string, findings = scanSecrets(text)): string {
  let out = '';
  let at = 0;
  for (const f of findings) {
    if (f.start < at) continue;
    out += `${text.slice(at, f.start)}[redacted:${f.kind}]`;
    at = f.end;
  }
  return out + text.slice(at);
}
