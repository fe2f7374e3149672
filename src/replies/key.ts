import type { Services } from '../kernel/module.js';
import { deriveReplyKey } from './token.js';

const keys = new WeakMap<Services, Buffer>();

/**
 * The reply-link key of this gateway: derived from the vault key (token.ts says why), once per
 * services object. Notify signs with it, the `/r/{token}` routes verify with it.
 */
export function replyKeyOf(services: Services): Buffer {
  let key = keys.get(services);
  if (!key) {
    key = deriveReplyKey(services.vaultKey);
    keys.set(services, key);
  }
  return key;
}
