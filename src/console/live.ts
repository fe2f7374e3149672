import type { Role } from '../kernel/module.js';
import type { Subscriber } from '../log/relay.js';

/**
 * Live updates: a relay subscriber fans each relevant event out to the browsers connected to this
 * process over Server-Sent Events. A message names only the topic and the event type, never its
 * content: the page fetches what changed through the same authorised routes it was rendered by.
 *
 * The relay hands an event to one process; a browser connected to another replica learns of it at
 * its next periodic refresh (the script refetches every `REFRESH_SECONDS`), so live is a latency
 * improvement, never the only way a page gets current.
 */

export type Topic = 'approvals' | 'tasks' | 'deliveries';

/** Who may hear a topic: approvers see approvals and tasks; deliveries are an admin's page. */
const TOPIC_ROLES: Record<Topic, readonly Role[]> = {
  approvals: ['approver', 'admin'],
  tasks: ['approver', 'admin'],
  deliveries: ['admin'],
};

/** A cap on open streams per process: each holds a socket; a console has a handful of people. */
export const MAX_CLIENTS = 200;
/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEPALIVE_MS = 25_000;
/** The fallback refresh of a live page (the script's own timer), for events relayed elsewhere. */
export const REFRESH_SECONDS = 30;

export function topicOf(type: string): Topic | undefined {
  if (type.startsWith('agent.approval.')) return 'approvals';
  if (type.startsWith('agent.task.')) return 'tasks';
  if (
    type === 'integration.delivery.dead' ||
    type === 'integration.delivery.succeeded' ||
    type === 'integration.delivery.replayed' ||
    type === 'integration.delivery.unknown'
  )
    return 'deliveries';
  return undefined;
}

export interface LiveClient {
  role: Role;
  /** The session behind the stream (undefined for a bearer key): signing out closes its streams. */
  sessionId: string | undefined;
  send(topic: Topic, data: string): void;
  close(): void;
}

export class LiveHub {
  private readonly clients = new Set<LiveClient>();

  get size(): number {
    return this.clients.size;
  }

  add(client: LiveClient): boolean {
    if (this.clients.size >= MAX_CLIENTS) return false;
    this.clients.add(client);
    return true;
  }

  remove(client: LiveClient): void {
    this.clients.delete(client);
  }

  publish(type: string): number {
    const topic = topicOf(type);
    if (!topic) return 0;
    const data = JSON.stringify({ type });
    let sent = 0;
    for (const c of this.clients) {
      if (!TOPIC_ROLES[topic].includes(c.role)) continue;
      c.send(topic, data);
      sent += 1;
    }
    return sent;
  }

  /** Sign-out: the session's open streams end too. */
  closeSession(sessionId: string): void {
    for (const c of [...this.clients]) if (c.sessionId === sessionId) c.close();
  }

  closeAll(): void {
    for (const c of [...this.clients]) c.close();
  }

  /**
   * The relay subscriber. It accepts nothing while no browser is connected, so a gateway nobody
   * watches pays nothing (the relay finishes rows no subscriber takes without reading their bodies).
   * A missed or repeated message only means one fetch more or less: no inbox.
   */
  subscriber(): Subscriber {
    return {
      name: 'console.live',
      ownsInbox: true,
      accepts: (type) => this.clients.size > 0 && topicOf(type) !== undefined,
      handle: async (event) => {
        this.publish(event.type);
      },
    };
  }
}
