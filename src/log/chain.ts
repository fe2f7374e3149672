import { createHash } from 'node:crypto';

/**
 * The hash of one link: sha256 over the previous hash and the event's canonical JSON. Any edit to a
 * body, a deleted row or a swapped pair changes a hash that `verifyChain` recomputes.
 */
export function linkHash(prevHash: string, canonicalBody: string): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonicalBody).digest('hex');
}
