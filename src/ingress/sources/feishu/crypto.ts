import { createDecipheriv, createHash } from 'node:crypto';

/**
 * `X-Lark-Signature`: lowercase hex SHA-256 of timestamp + nonce + encrypt key + raw body. A plain
 * hash, not an HMAC (signature_vectors.md §4b); hashed over the raw bytes, as the Go and Python SDKs do.
 */
export function larkSignature(
  timestamp: string,
  nonce: string,
  encryptKey: string,
  body: Uint8Array,
): string {
  return createHash('sha256').update(`${timestamp}${nonce}${encryptKey}`).update(body).digest('hex');
}

const IV_BYTES = 16;
const BLOCK_BYTES = 16;

/**
 * Opens an `{"encrypt": …}` body (§4c): AES-256-CBC, key SHA-256(encrypt key), IV the first 16 bytes.
 * Throws on a wrong key or a damaged ciphertext (bad padding); the caller decides what that means.
 */
export function larkDecrypt(encrypt: string, encryptKey: string): string {
  const raw = Buffer.from(encrypt, 'base64');
  if (raw.length < IV_BYTES + BLOCK_BYTES || (raw.length - IV_BYTES) % BLOCK_BYTES !== 0) {
    throw new Error('ciphertext has the wrong length');
  }
  const key = createHash('sha256').update(encryptKey).digest();
  const decipher = createDecipheriv('aes-256-cbc', key, raw.subarray(0, IV_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES)), decipher.final()]).toString('utf8');
}
