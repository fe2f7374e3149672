import type { AgentCard, Message, Part, Task } from '@a2a-js/sdk';
import { TaskState, taskStateToJSON } from '../a2a/wire.js';
import type { Client } from '@a2a-js/sdk/client';
import type { Egress } from '../egress/index.js';
import { guardedFetch } from './card.js';
import type { AgentRecord } from './registry.js';

/**
 * One attempt on a remote A2A agent with the official SDK client: `SendMessage` (through the egress
 * guard, with the agent's token), then one `GetTask` at once: a job that already ended answers with no
 * push at all (no commit on the receiver for it; bench `agents`). A job still running is told to the
 * engine (its task id goes on the attempt's row, so a recovery can cancel it, recover.ts), gets a push
 * config pointing at this gateway's `a2a-push` receiver and is looked at once more (it may have ended in
 * between, before the config existed); then the push of a terminal state (`settle`, from the relay
 * subscriber) or the deadline wakes it, whichever comes first, and the result is read with one
 * `GetTask`. At the deadline the remote task is cancelled. Without a push receiver (or an agent that
 * refuses the config) the task is polled instead, at a backing-off rate.
 */

export interface PushTarget {
  url: string;
  token: string;
}

export type RemoteOutcome =
  | { kind: 'completed'; taskId: string | null; text: string }
  | { kind: 'failed'; taskId: string | null; reason: string; answered: boolean }
  | { kind: 'timed_out'; taskId: string | null };

const ENDED = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  // A collaboration has no one to answer these: the attempt ends, as failed.
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

export const stateName = (s: TaskState | undefined) =>
  taskStateToJSON(s ?? TaskState.TASK_STATE_UNSPECIFIED)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase();

/** Terminal state names as pushes carry them (`TASK_STATE_COMPLETED`). */
export const ENDED_NAMES = new Set([...ENDED].map((s) => taskStateToJSON(s)));

/** Pushes that arrive before `SendMessage` has answered are kept this long for the attempt to find. */
const EARLY_TTL_MS = 60_000;
const EARLY_MAX = 10_000;
/** Without a push receiver: the first poll, and the ceiling the interval doubles up to. */
const POLL_MIN_MS = 100;
const POLL_MAX_MS = 2_000;

function textOf(parts: readonly Part[] | undefined): string[] {
  const out: string[] = [];
  for (const p of parts ?? []) {
    const c = p.content;
    if (c?.$case === 'text') out.push(c.value);
    else if (c?.$case === 'data') out.push(JSON.stringify(c.value));
  }
  return out;
}

export function resultText(t: Task): string {
  const fromArtifacts = (t.artifacts ?? []).flatMap((a) => textOf(a.parts));
  if (fromArtifacts.length > 0) return fromArtifacts.join('\n');
  return textOf(t.status?.message?.parts).join('\n');
}

function inputMessage(skill: string, input: unknown, refId: string): Message {
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  return {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: 1,
    parts: [
      {
        content: { $case: 'text', value: text },
        metadata: undefined,
        filename: '',
        mediaType: typeof input === 'string' ? 'text/plain' : 'application/json',
      },
    ],
    metadata: { skill, switchboard_ref: refId },
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The A2A SDK's client (about 230 KB of JavaScript) loads with the first collaboration, not at start
 * (issue 13, idle memory): a gateway that never delegates does not hold it.
 */
let clientSdk: Promise<typeof import('@a2a-js/sdk/client')> | undefined;
const loadClientSdk = () => {
  clientSdk ??= import('@a2a-js/sdk/client').catch((err: unknown) => {
    clientSdk = undefined; // the next collaboration tries again
    throw err;
  });
  return clientSdk;
};

const isTask = (r: unknown): r is Task => typeof r === 'object' && r !== null && 'status' in r && 'id' in r;

export class Remote {
  private readonly clients = new Map<string, { card: AgentCard; client: Promise<Client> }>();
  private readonly waiters = new Map<string, () => void>();
  private readonly early = new Map<string, number>();

  constructor(
    private readonly egress: Pick<Egress, 'send'>,
    private readonly push: () => PushTarget | undefined,
  ) {}

  private client(a: AgentRecord): Promise<Client> {
    const known = this.clients.get(a.id);
    if (known && known.card === a.card) return known.client;
    // Only the v1.0 JSON-RPC interface: the card may list others the client would otherwise prefer.
    const card: AgentCard = {
      ...a.card,
      supportedInterfaces: a.card.supportedInterfaces.filter(
        (i) => i.protocolVersion === '1.0' && i.protocolBinding === 'JSONRPC',
      ),
    };
    const client = loadClientSdk().then(({ ClientFactory, JsonRpcTransportFactory }) =>
      new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl: guardedFetch(this.egress, a.token) })],
      }).createFromAgentCard(card),
    );
    this.clients.set(a.id, { card: a.card, client });
    return client;
  }

  /**
   * A push of a terminal state for `taskId` (the relay subscriber, or another replica's broadcast):
   * wakes the attempt waiting on it here and says so; otherwise keeps it for an attempt whose
   * SendMessage has not answered yet.
   */
  settle(taskId: string, now: number): boolean {
    const w = this.waiters.get(taskId);
    if (w) {
      w();
      return true;
    }
    if (this.early.size >= EARLY_MAX) this.early.clear();
    this.early.set(taskId, now);
    return false;
  }

  /** Cancels a remote task (a recovery's, recover.ts); failures are the caller's to log. */
  async cancel(a: AgentRecord, taskId: string): Promise<void> {
    const client = await this.client(a);
    await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
  }

  async run(
    a: AgentRecord,
    skill: string,
    input: unknown,
    refId: string,
    timeoutMs: number,
    now: () => number,
    /** The remote task is still running after the first look: the engine records its id. */
    running?: (taskId: string) => Promise<void>,
  ): Promise<RemoteOutcome> {
    const abort = new AbortController();
    let timedOut = false;
    let wake: () => void = () => {};
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
      wake();
    }, timeoutMs);
    let taskId: string | null = null;
    try {
      const client = await this.client(a);
      let res: unknown;
      try {
        res = await client.sendMessage(
          {
            tenant: '',
            message: inputMessage(skill, input, refId),
            configuration: {
              acceptedOutputModes: [],
              taskPushNotificationConfig: undefined,
              returnImmediately: true,
            },
            metadata: undefined,
          },
          { signal: abort.signal },
        );
      } catch (err) {
        if (timedOut) return { kind: 'timed_out', taskId: null };
        return { kind: 'failed', taskId: null, reason: reasonOf(err), answered: false };
      }
      if (!isTask(res)) {
        const m = res as Partial<Message>;
        if (Array.isArray(m.parts))
          return { kind: 'completed', taskId: null, text: textOf(m.parts).join('\n') };
        return {
          kind: 'failed',
          taskId: null,
          reason: 'the agent answered neither a task nor a message',
          answered: true,
        };
      }
      let task = res;
      taskId = task.id;
      const id = task.id;
      const ended = (t: Task | undefined) => ENDED.has(t?.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
      const look = () =>
        client.getTask({ tenant: '', id, historyLength: 0 }, { signal: abort.signal }).catch(() => undefined);
      if (!ended(task)) {
        // One look right away: a job that ended while SendMessage answered needs no push to be seen.
        const first = await look();
        if (ended(first)) task = first!;
      }
      if (!ended(task)) {
        let seen: Task | undefined;
        const settled = new Promise<void>((resolve) => {
          wake = resolve;
          this.waiters.set(id, resolve);
        });
        if (timedOut) wake();
        const early = this.early.get(id);
        if (early !== undefined && now() - early <= EARLY_TTL_MS) {
          this.early.delete(id);
          wake();
        }
        await running?.(id);
        const push = this.push();
        let pushed = false;
        if (push && !timedOut)
          pushed = await client
            .createTaskPushNotificationConfig(
              { tenant: '', id: '', taskId: id, url: push.url, token: push.token, authentication: undefined },
              { signal: abort.signal },
            )
            .then(
              () => true,
              () => false,
            );
        // A second look: the job may have ended before its push config existed (no push then).
        void look().then((t) => {
          if (!ended(t)) return;
          seen = t;
          wake();
        });
        if (!pushed) void this.poll(client, id, abort.signal, wake);
        await settled;
        this.waiters.delete(id);
        if (timedOut) {
          await client.cancelTask({ tenant: '', id, metadata: undefined }).catch(() => undefined);
          return { kind: 'timed_out', taskId };
        }
        if (seen) task = seen;
        else
          try {
            task = await client.getTask({ tenant: '', id, historyLength: 0 }, { signal: abort.signal });
          } catch (err) {
            if (timedOut) return { kind: 'timed_out', taskId };
            return { kind: 'failed', taskId, reason: reasonOf(err), answered: false };
          }
      }
      const state = task.status?.state;
      if (state === TaskState.TASK_STATE_COMPLETED)
        return { kind: 'completed', taskId, text: resultText(task) };
      const said = textOf(task.status?.message?.parts).join(' ');
      return {
        kind: 'failed',
        taskId,
        reason: `the agent's task ended ${stateName(state)}${said ? `: ${said.slice(0, 500)}` : ''}`,
        answered: true,
      };
    } finally {
      clearTimeout(timer);
      abort.abort(); // ends the poll, if one runs
      if (taskId) this.waiters.delete(taskId);
    }
  }

  /** No push receiver: GetTask until the task ends or the attempt's signal aborts. */
  private async poll(client: Client, id: string, signal: AbortSignal, wake: () => void): Promise<void> {
    let wait = POLL_MIN_MS;
    while (!signal.aborted) {
      await new Promise((r) => setTimeout(r, wait));
      if (signal.aborted) return;
      wait = Math.min(wait * 2, POLL_MAX_MS);
      const t = await client.getTask({ tenant: '', id, historyLength: 0 }, { signal }).catch(() => undefined);
      if (t && ENDED.has(t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) {
        wake();
        return;
      }
    }
  }
}

/** A short reason for a failed call: the SDK's error message (a JSON-RPC error, a parse failure). */
function reasonOf(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.slice(0, 500) || 'the call failed';
}
