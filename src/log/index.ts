export * from './inbox.js';
export * from './log.js';
export * from './relay.js';
export * from './vault.js';
export * from './verify.js';
