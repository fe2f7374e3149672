import { sha256Hex } from '../envelope/digest.js';

/**
 * The hash of one link: sha256 over the previous hash, a newline and the event's canonical JSON. Any
 * edit to a body, a deleted row or a swapped pair changes a hash that `verifyChain` recomputes. One
 * one-shot `crypto.hash` over the joined text: the same bytes as three `update`s, without a Hash object.
 */
export function linkHash(prevHash: string, canonicalBody: string): string {
  return sha256Hex(`${prevHash}\n${canonicalBody}`);
}
