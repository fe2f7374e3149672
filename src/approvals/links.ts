import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseId } from '../envelope/index.js';
import { deriveKey, KEY_LABELS } from '../keys/derive.js';

/**
 * Signed one-time links for phones. The token is the credential: `<approval id>.<expiry ms>.<mac>`,
 * the mac an HMAC-SHA256 over the approval id, its action, its plan digest and its expiry. A token
 * carries no state of its own; it is "one-time" because the approval it names can be decided once.
 * Binding the action and plan digest means a row changed behind the token's back no longer matches.
 */

/** Also the first line the mac covers, so a mac made for another purpose never matches. */
const MAC_LABEL = KEY_LABELS.approvalLink;

/**
 * The link key is derived from the vault key (`deriveKey`, label `approvalLink`), so replicas accept
 * each other's links. Rotating the vault key invalidates outstanding links, which expire within the
 * TTL anyway.
 */
export function deriveLinkKey(vaultKey: Uint8Array): Buffer {
  return deriveKey(vaultKey, 'approvalLink');
}

export interface LinkSubject {
  id: string;
  action: string;
  plan_digest: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

function mac(key: Uint8Array, s: LinkSubject): Buffer {
  return createHmac('sha256', key)
    .update(`${MAC_LABEL}\n${s.id}\n${s.action}\n${s.plan_digest}\n${s.expires_at}`)
    .digest();
}

export function signLink(key: Uint8Array, s: LinkSubject): string {
  return `${s.id}.${s.expires_at}.${mac(key, s).toString('base64url')}`;
}

export interface ParsedToken {
  id: string;
  expires_at: number;
  mac: Buffer;
}

const TOKEN_RE = /^([a-z]{3}_[0-9A-Z]{26})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/;

/** Splits a token without trusting it; undefined when it cannot be one of ours. */
export function parseToken(token: string): ParsedToken | undefined {
  const m = TOKEN_RE.exec(token);
  if (!m) return undefined;
  const id = parseId('approval', m[1]);
  if (!id) return undefined;
  return { id, expires_at: Number(m[2]), mac: Buffer.from(m[3]!, 'base64url') };
}

/** Whether `token` was signed by `key` for exactly this approval (constant-time on the mac). */
export function verifyLink(key: Uint8Array, token: ParsedToken, s: LinkSubject): boolean {
  if (token.id !== s.id || token.expires_at !== s.expires_at) return false;
  const expected = mac(key, s);
  return expected.length === token.mac.length && timingSafeEqual(expected, token.mac);
}

export interface ApprovalLinks {
  /** The confirmation page: a GET that shows what is asked and changes nothing. */
  pageUrl: string;
  /** POST targets for channels with HTTP action buttons (ntfy `http` actions); a GET shows the page. */
  approveUrl: string;
  rejectUrl: string;
}

export function linksFor(key: Uint8Array, s: LinkSubject, baseUrl: string): ApprovalLinks {
  const pageUrl = `${baseUrl.replace(/\/+$/, '')}/a/${signLink(key, s)}`;
  return { pageUrl, approveUrl: `${pageUrl}?decision=approve`, rejectUrl: `${pageUrl}?decision=reject` };
}
