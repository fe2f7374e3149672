import { port } from '../kernel/port.js';

/** One thing that waits for a person, as the takeover queue lists it. */
export interface TakeoverItem {
  /** What kind of wait: `approval`, `stalled_session`, `delivery_unknown`, `dead_letter`, `failed_task`, `dead_outbox_row`, … */
  kind: string;
  /** The id to act on with the kind's own API or command (`apr_…`, `dlv_…`, `tsk_…`, an outbox row id). */
  id: string;
  /** One line a person reads. */
  summary: string;
  /** Since when it waits (ISO 8601): the queue is oldest first. */
  since: string;
  /** What acts on it: a route or a command. */
  act: string;
}

/**
 * A kind of wait a module knows how to list. The takeover module owns this interface; a module whose
 * service can list such waits implements it, and either the takeover module reads it through an
 * optional port (sources.ts, one line) or the module registers it at start (`takeoverPort.register`).
 */
export interface TakeoverSource {
  kind: string;
  /** At most `limit` items, any order. */
  list(limit: number): Promise<TakeoverItem[]>;
}

export interface TakeoverRegistry {
  /** Adds a source (a module calls it at its start); a second source of one kind is refused. */
  register(source: TakeoverSource): void;
}

/** The takeover queue's registry (src/takeover/module.ts provides it). */
export const takeoverPort = port<TakeoverRegistry>('takeover');
