/**
 * `switchboard a2a card|send|tasks`: an A2A v1.0 client built on the official SDK. `card` and `tasks`
 * talk to this gateway (SWITCHBOARD_URL with SWITCHBOARD_KEY); `send` talks to any A2A agent, with the
 * key when one is set, so it also tries agents that are not Switchboard.
 */
import { AgentCard, type Message, type Task, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { clientKey, DEFAULT_URL, unreachableMessage } from './client.js';

export interface A2ACliOptions {
  /** `send`: register this callback URL for the task's push notifications. */
  push?: string;
  /** `send`: the skill to run (`message.metadata.skill`); the agent's only skill when absent. */
  skill?: string;
  /** `send`: return once the task exists instead of when it ends. */
  wait?: boolean;
  json?: boolean;
  url?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
}

function print(opts: A2ACliOptions, line: string): void {
  (opts.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
}

function gatewayUrl(opts: A2ACliOptions): string {
  const env = opts.env ?? process.env;
  return (opts.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
}

/** The SDK client for the agent at `base`, sending the key (when there is one) as a bearer. */
async function clientFor(base: string, opts: A2ACliOptions): Promise<Client> {
  const key = clientKey(opts.env ?? process.env, ['agent', 'admin']);
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (key) headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
  const card = await cardAt(base, base === gatewayUrl(opts));
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  });
  return factory.createFromAgentCard(card);
}

/**
 * The agent card at `base`. A failure names the card's URL and the network's reason (`ECONNREFUSED`,
 * `ENOTFOUND`); when `base` is this gateway's own URL and nothing answers there, the wording every
 * client command uses for an unreachable gateway (how to start it, or where to point it).
 */
async function cardAt(base: string, own: boolean): Promise<AgentCard> {
  try {
    return await new DefaultAgentCardResolver().resolve(base);
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    if (own && typeof code === 'string') throw new Error(unreachableMessage(base, err));
    const why = typeof code === 'string' ? ` (${code})` : '';
    throw new Error(
      `no A2A agent card at ${base}/.well-known/agent-card.json: ${(err as Error).message}${why}`,
    );
  }
}

function taskLine(t: Task): string {
  const state = taskStateToJSON(t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED).replace(
    /^TASK_STATE_/,
    '',
  );
  const said = t.status?.message?.parts.find((p) => p.content?.$case === 'text')?.content;
  const note = said?.$case === 'text' ? `  ${JSON.stringify(said.value)}` : '';
  return `${t.id}  ${state.toLowerCase().padEnd(14)}  ${t.contextId}${note}`;
}

export async function card(url: string | undefined, opts: A2ACliOptions = {}): Promise<void> {
  const base = (url ?? gatewayUrl(opts)).replace(/\/+$/, '');
  const c = await cardAt(base, url === undefined);
  print(opts, JSON.stringify(AgentCard.toJSON(c), null, opts.json ? undefined : 2));
}

export async function send(url: string, text: string, opts: A2ACliOptions = {}): Promise<void> {
  const client = await clientFor(url.replace(/\/+$/, ''), opts);
  const message: Message = {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: 1,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: opts.skill ? { skill: opts.skill } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const push = opts.push
    ? { tenant: '', id: '', taskId: '', url: opts.push, token: '', authentication: undefined }
    : undefined;
  const result = await client.sendMessage({
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: push,
      returnImmediately: opts.wait === false,
    },
    metadata: undefined,
  });
  if ('status' in result) print(opts, opts.json ? JSON.stringify(result) : taskLine(result as Task));
  else print(opts, JSON.stringify(result));
}

export async function tasks(opts: A2ACliOptions = {}): Promise<void> {
  const client = await clientFor(gatewayUrl(opts), opts);
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 50,
    pageToken: '',
    statusTimestampAfter: undefined,
  });
  for (const t of page.tasks) print(opts, opts.json ? JSON.stringify(t) : taskLine(t));
}
