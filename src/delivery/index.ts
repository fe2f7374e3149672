export * from './breaker.js';
export * from './ratelimit.js';
export * from './retry.js';
export * from './config.js';
export * from './events.js';
export { revokedChannels, revokedRefusal } from './engine/revoked.js';
