/**
 * Egress: every outbound request. A leaf: it imports nothing of Switchboard's features, and delivery,
 * channels, tasks and ingress all reach the network through it (`createEgress`).
 */
export * from './addresses.js';
export * from './dispatcher.js';
export * from './egress.js';
export * from './send.js';
export * from './sign.js';
export * from './ssrf.js';
export * from './url.js';
export * from './live.js';
