import type { Revision } from '../../source.js';

/** A resource key or tag longer than this is not an id; such a delivery is left unordered. */
const MAX_KEY = 300;

/**
 * Epoch milliseconds of a sender's time stamp: ISO 8601 (`2019-05-15T15:20:33Z`), GitLab's older
 * `2013-12-03 17:23:34 UTC`, or epoch seconds as a number. Undefined when it is none of these.
 */
export function stampMs(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value * 1000;
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A revision from its parts; undefined unless every part is present and short. */
export function revisionOf(
  resource: string | undefined,
  at: number | undefined,
  tag?: string,
): Revision | undefined {
  if (resource === undefined || at === undefined || resource.length > MAX_KEY) return undefined;
  return { resource, at, ...(tag !== undefined && tag.length <= MAX_KEY ? { tag } : {}) };
}
