import { RandomPool } from './random.js';
import { monotonicFactory } from 'ulid';

/**
 * Prefixed, sortable ids. The prefix says what an id names, so an approval id pasted where a task id
 * belongs is rejected by `parseId` instead of silently matching nothing. The body is a ULID: time
 * ordered, so ids sort by creation and make good primary keys on both databases.
 */
export const ID_PREFIXES = {
  event: 'evt',
  approval: 'apr',
  capability: 'cap',
  delivery: 'dlv',
  task: 'tsk',
  vault: 'vlt',
  outbox: 'obx',
  webhook: 'whk',
  correlation: 'cor',
  session: 'ses',
  notification: 'ntf',
  revocation: 'rvk',
  /** A trigger run (ingress admission): one pending or started run of a trigger. */
  run: 'run',
  /** A touch through the reach layer (src/reach), when the caller gave no request id of its own. */
  touch: 'tch',
  /** A collaboration between agents (src/agents): the receipt's `ref_id`. */
  collaboration: 'col',
  /** A gateway process on a shared store (src/cluster): a new one at every start. */
  replica: 'rep',
  /** A side effect with its receipt (src/effects). */
  effect: 'eff',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];
export type Id<K extends IdKind> = string & { readonly __id: K };

export type EventId = Id<'event'>;
export type ApprovalId = Id<'approval'>;
export type CapabilityId = Id<'capability'>;
export type DeliveryId = Id<'delivery'>;
export type TaskId = Id<'task'>;
export type VaultRef = Id<'vault'>;

/**
 * ulid's default source calls `crypto.getRandomValues` once per character, 16 times per id: about 4 %
 * of the CPU of a `report_progress` call (bench notify). The same CSPRNG, drawn 4 KiB at a time, serves
 * 256 ids per call. `byte / 256` is uniform over 32 equal steps, so each character stays uniform.
 */
const pool = new RandomPool();
const pooledRandom = () => pool.byte() / 256;

const ulid = monotonicFactory(pooledRandom);
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export function newId<K extends IdKind>(kind: K, now: number = Date.now()): Id<K> {
  return `${ID_PREFIXES[kind]}_${ulid(now)}` as Id<K>;
}

/** Returns the id when it has the right prefix and a well-formed ULID body, otherwise undefined. */
export function parseId<K extends IdKind>(kind: K, value: unknown): Id<K> | undefined {
  if (typeof value !== 'string') return undefined;
  const prefix = `${ID_PREFIXES[kind]}_`;
  if (!value.startsWith(prefix)) return undefined;
  return ULID_RE.test(value.slice(prefix.length)) ? (value as Id<K>) : undefined;
}

export function isId<K extends IdKind>(kind: K, value: unknown): value is Id<K> {
  return parseId(kind, value) !== undefined;
}
