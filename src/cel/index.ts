export * from './convert.js';
export * from './environment.js';
