export * from './config.js';
export * from './links.js';
export * from './module.js';
export * from './page.js';
export * from './routes.js';
export * from './service.js';
export * from './view.js';
