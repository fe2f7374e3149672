export * from './addresses.js';
export * from './breaker.js';
export * from './dispatcher.js';
export * from './http.js';
export * from './ratelimit.js';
export * from './retry.js';
export * from './sign.js';
export * from './ssrf.js';
