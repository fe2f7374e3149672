export * from './inbox.js';
export * from './log.js';
export * from './relay.js';
export * from './vault.js';
export * from './verify.js';

/** The log's own tables (events, log_head, outbox, inbox, vault): migrations 0001–0099. */
export const LOG_MIGRATIONS = new URL('./migrations/', import.meta.url);
