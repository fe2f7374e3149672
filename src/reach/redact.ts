import type { PiiKind } from './config.js';

/**
 * PII redaction before a result reaches the model (seed §4.2, the closing note: masking at the reach
 * layer beats asking the model not to repeat what it read). Each finding becomes a typed placeholder,
 * `[redacted:cn_mobile]`, the same shape `scan/secrets.ts` uses for secrets. Numbers with a checksum
 * are redacted only when the checksum holds, so an order number is not mistaken for an ID card:
 *
 * - `cn_id_card`: GB 11643-1999, 18 characters, a real birth date, ISO 7064 MOD 11-2 check character.
 * - `bank_card`: 15–19 digits (spaces or dashes between groups allowed), a card-network first digit
 *   (2–6), and the Luhn check. The first-digit rule keeps millisecond timestamps (1…) out.
 * - `cn_mobile`: a mainland mobile number (1[3-9] + 9 digits), with or without +86 and separators.
 * - `email`: the common address shape.
 *
 * Pinned by redact.test.ts with realistic samples, valid and invalid checksums.
 */

const ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
const ID_CHECK = '10X98765432';

export function validIdCard(s: string): boolean {
  if (!/^[1-9]\d{16}[\dXx]$/.test(s)) return false;
  const y = Number(s.slice(6, 10));
  const m = Number(s.slice(10, 12));
  const d = Number(s.slice(12, 14));
  if (y < 1900 || y > 2100 || m < 1 || m > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  if (d > days) return false;
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += Number(s[i]) * ID_WEIGHTS[i]!;
  return ID_CHECK[sum % 11] === s[17]!.toUpperCase();
}

export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let v = digits.charCodeAt(i) - 48;
    if (v < 0 || v > 9) return false;
    if (double) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
    double = !double;
  }
  return sum % 10 === 0;
}

interface Detector {
  kind: PiiKind;
  re: RegExp;
  accept?: (match: string) => boolean;
}

// Order matters: the longer, checksummed numbers claim their digits before a mobile number could
// match eleven of them (the digit look-arounds keep a mobile number from matching inside one anyway).
const DETECTORS: Detector[] = [
  { kind: 'cn_id_card', re: /(?<![0-9A-Za-z])[1-9]\d{16}[\dXx](?![0-9A-Za-z])/g, accept: validIdCard },
  {
    kind: 'bank_card',
    re: /(?<![\d-])[2-6]\d{3}(?:[ -]?\d){11,15}(?![\d-])/g,
    accept: (m) => {
      const digits = m.replace(/[ -]/g, '');
      return digits.length >= 15 && digits.length <= 19 && luhn(digits);
    },
  },
  { kind: 'cn_mobile', re: /(?<![\d+])(?:(?:\+|00)?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)/g },
  { kind: 'email', re: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
];

export type RedactionCounts = Partial<Record<PiiKind, number>>;

/** Replaces every finding of the given kinds in `text`; counts what it replaced into `counts`. */
export function redactText(text: string, kinds: readonly PiiKind[], counts: RedactionCounts = {}): string {
  if (kinds.length === 0 || text.length < 6) return text;
  let out = text;
  for (const d of DETECTORS) {
    if (!kinds.includes(d.kind)) continue;
    out = out.replace(d.re, (m) => {
      if (d.accept && !d.accept(m)) return m;
      counts[d.kind] = (counts[d.kind] ?? 0) + 1;
      return `[redacted:${d.kind}]`;
    });
  }
  return out;
}

/**
 * A JSON value with PII replaced in every string, and in every number whose digits are PII (a phone
 * column stored as INTEGER). Keys are left as they are: they name fields, they do not hold data.
 */
export function redactValue(
  value: unknown,
  kinds: readonly PiiKind[],
  counts: RedactionCounts = {},
): unknown {
  if (kinds.length === 0) return value;
  const visit = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, kinds, counts);
    if (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) >= 1e10) {
      const s = String(v);
      const r = redactText(s, kinds, counts);
      return r === s ? v : r;
    }
    if (Array.isArray(v)) return v.map(visit);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = visit(x);
      return out;
    }
    return v;
  };
  return visit(value);
}
