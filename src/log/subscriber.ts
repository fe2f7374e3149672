import type { Logger } from 'pino';
import type { Envelope } from '../envelope/index.js';
import { BUS_TOPIC } from './log.js';

/**
 * What the relay (relay.ts) promises and asks: the subscriber it hands events to, the loop it runs
 * as, its options with their defaults, and the counts it keeps.
 */

export interface Subscriber {
  /** Stable name: it keys the inbox, so renaming a subscriber makes it see old events again. */
  name: string;
  accepts(type: string): boolean;
  /**
   * `body` is the event as stored (its canonical JSON, the bytes its hash covers) when a pipelined
   * relay read it for a claim: a subscriber that forwards the event whole can send it as it is instead
   * of serializing the envelope again (the NATS publisher). Absent otherwise.
   */
  handle(event: Envelope, body?: string): Promise<void>;
  /**
   * The handler needs no inbox from the relay: it keeps its own (`once()`: the mark commits with its
   * effect), or its effect is idempotent by itself (an upsert). The relay neither checks nor marks one
   * for it: one read and one commit less per event.
   */
  ownsInbox?: boolean;
  /**
   * The handler's version (bump it when what it does with an event changes): a row parked as dead
   * keeps the failing subscriber's name and this, so a person knows which code to fix before a replay.
   */
  version?: string;
}

/**
 * The relay's loop as plain data, in the shape of the kernel's `WorkerSpec`. The log sits below the
 * kernel and may not import it, so the kernel's `startWorker` is handed in (`RelayOptions.run`); the
 * compiler checks there that the two shapes still agree.
 */
export interface RelayLoop {
  name: string;
  intervalMs: number;
  immediate: boolean;
  backoff: { minMs: number; maxMs: number; factor: number };
  tick(): Promise<boolean>;
  onError(err: unknown, retryInMs: number): void;
}

/** What `RelayOptions.run` returns: the kernel's `Worker`, as far as the relay uses it. */
export interface RelayWorker {
  wake(): void;
  stop(): Promise<void>;
}

export interface RelayOptions {
  /** The outbox topic this relay claims (default the bus); only the bus relay takes in-process hand-offs. */
  topic?: string;
  /** Runs the loop on `start` (the kernel's `startWorker`); without it the relay only runs `drain`/`runOnce`. */
  run?: (loop: RelayLoop) => RelayWorker;
  batchSize?: number;
  /** A claimed row whose worker died becomes claimable again after this. */
  leaseMs?: number;
  idleMs?: number;
  maxBackoffMs?: number;
  /** After this many failed attempts a row is parked as `dead` and stops blocking its correlation. */
  maxAttempts?: number;
  concurrency?: number;
  /**
   * Pipelined (the app's bus relay and the NATS relay): a claim takes the ready rows queued behind
   * each correlation it holds too (`claimOutboxFollowers`), every correlation's rows go to one chain
   * that hands them out one after another, and the next claim runs while chains still work, until
   * `batchSize × PIPELINE_DEPTH` rows are out. Up to `concurrency` subscriber calls run at once, at
   * most one per correlation. A row whose lease is
   * running out before its turn comes is released, not handled (the next claim takes it again, in
   * order). Off: one row per correlation per claim, and a claimed batch is finished before the next.
   */
  pipeline?: boolean;
  /**
   * The subscribers take every event (the NATS relay): a claim then reads no event types (one lookup
   * per row less), and every claimed row is read and handed out.
   */
  everyEvent?: boolean;
  logger?: Logger;
  now?: () => number;
}

export const RELAY_DEFAULTS = {
  topic: BUS_TOPIC,
  batchSize: 100,
  leaseMs: 30_000,
  idleMs: 250, // an append in this process wakes the loop at once; polling only catches other processes
  maxBackoffMs: 5 * 60_000,
  maxAttempts: 25,
  concurrency: 8,
  pipeline: false,
  everyEvent: false,
};

/** What the relay has done since it was built (for `/metrics` and the bench). */
export interface RelayStats {
  /** Claim transactions run (each may also carry acknowledgements). */
  claims: number;
  /** Outbox rows those claims returned. */
  claimedRows: number;
  /** Events handed to subscribers in-process, right after their commit, without a claim. */
  handoffs: number;
  /** Acknowledgement statements: batched deletes of handled outbox rows. */
  acks: number;
  ackedRows: number;
}
