export * from './migrate.js';
export * from './open.js';
export * from './port.js';
export { PostgresDb } from './postgres.js';
export { SqliteDb } from './sqlite.js';
