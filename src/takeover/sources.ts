import type { ApprovalService } from '../approvals/port.js';
import type { DeliveryPort } from '../delivery/port.js';
import type { EffectsPort } from '../effects/port.js';
import type { EventLog } from '../log/log.js';
import type { SessionWatch } from '../signals/port.js';
import type { TaskService } from '../tasks/port.js';
import type { TakeoverItem, TakeoverSource } from './port.js';

/** What the built-in sources read: each module's port when it runs, and the log. */
export interface SourcePorts {
  approvals?: ApprovalService | undefined;
  sessions?: SessionWatch | undefined;
  delivery?: DeliveryPort | undefined;
  tasks?: TaskService | undefined;
  effects?: EffectsPort | undefined;
  log: EventLog;
}

const iso = (ms: number) => new Date(ms).toISOString();

function deliveries(
  d: DeliveryPort | undefined,
  status: 'reconcile' | 'dead',
  kind: string,
  act: string,
): TakeoverSource | undefined {
  const list = d?.list?.bind(d);
  if (!list) return undefined;
  return {
    kind,
    list: async (limit) =>
      (await list({ status, limit, newestFirst: true })).map(
        (v): TakeoverItem => ({
          kind,
          id: v.id,
          summary: `${v.destination}: ${v.last_error ?? status}${v.attempts ? ` (${v.attempts} attempts)` : ''}`,
          since: v.updated_at,
          act,
        }),
      ),
  };
}

/**
 * The built-in sources, one line each: a kind of wait and the port it is read through. A module
 * not running (its port absent) has no line in the answer; adding a kind is one more line here (or a
 * module registering its own `TakeoverSource` through `takeoverPort`).
 */
export function builtInSources(p: SourcePorts): TakeoverSource[] {
  const approvals = p.approvals?.list?.bind(p.approvals);
  const tasks = p.tasks?.list?.bind(p.tasks);
  const sessions = p.sessions;
  const all: (TakeoverSource | undefined)[] = [
    approvals && {
      kind: 'approval',
      list: async (limit) =>
        (await approvals({ state: 'pending', limit })).map((a) => ({
          kind: 'approval',
          id: a.id,
          summary: `${a.action}: ${a.reason} (asked by ${a.requested_by}, expires ${a.expires_at})`,
          since: a.created_at,
          act: `switchboard approvals approve|reject ${a.id}`,
        })),
    },
    sessions && {
      kind: 'stalled_session',
      list: async (limit) =>
        (await sessions.stalled(limit)).map((s) => ({
          kind: 'stalled_session',
          id: `${s.runtime}:${s.session_id}`,
          summary: `${s.runtime} session ${s.session_id} stalled mid-turn`,
          since: iso(s.since),
          act: 'look at the session (the console’s sessions page)',
        })),
    },
    deliveries(
      p.delivery,
      'reconcile',
      'delivery_unknown',
      'switchboard dlq list --status reconcile; dlq replay --id',
    ),
    deliveries(p.delivery, 'dead', 'dead_letter', 'switchboard dlq replay --id'),
    // A channel the provider refused the credential of: nothing is sent to it until a person fixes it.
    p.delivery?.channelHealth && {
      kind: 'revoked_channel',
      list: async (limit) =>
        (await p.delivery!.channelHealth!())
          .flatMap((c) => (c.status === 'revoked' ? [c] : []))
          .slice(0, limit)
          .map((c) => ({
            kind: 'revoked_channel',
            id: c.name,
            summary: `channel ${c.name} (${c.type}): credential revoked at the provider (${c.reason})`,
            since: c.since,
            act: c.fix,
          })),
    },
    // An effect nobody could settle (a task POST or a tool that timed out); deliveries are listed above.
    p.effects && {
      kind: 'unsettled_effect',
      list: async (limit) =>
        (await p.effects!.unsettled(limit))
          .filter((e) => e.kind !== 'delivery' && e.kind !== 'a2a')
          .map((e) => ({
            kind: 'unsettled_effect',
            id: e.id,
            summary: `${e.kind} ${e.target} (${e.ref}): ${e.detail ?? 'outcome unknown'}`,
            since: e.updated_at,
            act: `switchboard audit trace ${e.id}`,
          })),
    },
    tasks && {
      kind: 'failed_task',
      list: async (limit) =>
        (await tasks({ state: 'failed', limit })).map((t) => ({
          kind: 'failed_task',
          id: t.id,
          summary: `${t.title}${t.owner ? ` (${t.owner})` : ''}`,
          since: t.updated_at,
          act: `GET /v1/tasks/${t.id}`,
        })),
    },
    {
      kind: 'dead_outbox_row',
      list: async (limit) =>
        (await p.log.deadOutbox(limit)).map((r) => ({
          kind: 'dead_outbox_row',
          id: String(r.id),
          summary: `${r.type ?? r.event_id} failed in ${r.consumer ?? '?'}@${r.consumer_version ?? '-'}: ${r.last_error ?? ''}`,
          since: r.dead_at ?? r.created_at,
          act: `switchboard outbox replay --id ${r.id}`,
        })),
    },
  ];
  return all.filter((s): s is TakeoverSource => s !== undefined);
}
