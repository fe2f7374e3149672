export * from './env.js';
export * from './load.js';
export * from './schema.js';
