import type { ConfigCheck } from '../config/load.js';

/** The config checks modules add for the sections they own; empty until a module registers one. */
export function moduleConfigChecks(): ConfigCheck[] {
  return [];
}
