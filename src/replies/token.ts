import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { parseId } from '../envelope/index.js';
import { deriveKey, KEY_LABELS } from '../keys/derive.js';

/**
 * Signed reply links: `<payload>.<mac>`, the payload base64url JSON `{t, s, c, e, n}` (task id,
 * session id, channel, expiry in epoch ms, a random nonce), the mac HMAC-SHA256 over the label and the
 * payload. Binding the session means a reply never lands in a session the message was not about. The
 * nonce names the token in `reply_uses`, which makes it one-time.
 */

/** Also the first line the mac covers, so a mac made for another purpose never matches. */
const MAC_LABEL = KEY_LABELS.replyLink;

/**
 * Derived from the vault key like the approval link key, with its own label (`deriveKey`,
 * `replyLink`): an approval token can never verify as a reply token (nor the other way round).
 */
export function deriveReplyKey(vaultKey: Uint8Array): Buffer {
  return deriveKey(vaultKey, 'replyLink');
}

export interface ReplySubject {
  task_id: string;
  session_id: string;
  /** The channel the link was sent to (audit only). */
  channel: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

export interface ReplyToken extends ReplySubject {
  nonce: string;
}

function mac(key: Uint8Array, payload: string): Buffer {
  return createHmac('sha256', key).update(`${MAC_LABEL}\n${payload}`).digest();
}

export function signReply(
  key: Uint8Array,
  s: ReplySubject,
  nonce = randomBytes(16).toString('base64url'),
): string {
  const payload = Buffer.from(
    JSON.stringify({ t: s.task_id, s: s.session_id, c: s.channel, e: s.expires_at, n: nonce }),
  ).toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/** A token is at most this long; anything longer is not ours and is not even hashed. */
const TOKEN_MAX_CHARS = 1024;
const TOKEN_RE = /^([A-Za-z0-9_-]{16,980})\.([A-Za-z0-9_-]{43})$/;
const NONCE_RE = /^[A-Za-z0-9_-]{16,64}$/;
const SESSION_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const CHANNEL_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The subject of a token signed by `key`, or undefined for anything else (constant time on the mac).
 * Expiry is not checked here: the caller says "expired" rather than "invalid" for a genuine old link.
 */
export function verifyReply(key: Uint8Array, token: string): ReplyToken | undefined {
  if (token.length > TOKEN_MAX_CHARS) return undefined;
  const m = TOKEN_RE.exec(token);
  if (!m) return undefined;
  const expected = mac(key, m[1]!);
  const given = Buffer.from(m[2]!, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let p: unknown;
  try {
    p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof p !== 'object' || p === null) return undefined;
  const { t, s, c, e, n } = p as Record<string, unknown>;
  const task = parseId('task', t);
  if (!task || typeof s !== 'string' || !SESSION_RE.test(s)) return undefined;
  if (typeof c !== 'string' || !CHANNEL_RE.test(c)) return undefined;
  if (typeof e !== 'number' || !Number.isSafeInteger(e) || typeof n !== 'string' || !NONCE_RE.test(n))
    return undefined;
  return { task_id: task, session_id: s, channel: c, expires_at: e, nonce: n };
}

export function replyUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/r/${token}`;
}
