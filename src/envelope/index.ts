export * from './build.js';
export * from './catalogue.js';
export * from './cloudevents.js';
export * from './digest.js';
export * from './envelope.js';
export * from './ids.js';
export * from './schema.js';
export * from './plan.js';
