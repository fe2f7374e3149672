export * from './convert.js';
export * from './environment.js';
export * from './ast.js';
