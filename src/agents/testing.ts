import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { AGENT_CARD_PATH, AgentCard, type Part, type TaskStatus, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import { Hono } from 'hono';

/**
 * Real A2A v1.0 agents for the agents suites (not shipped behaviour): the official SDK's
 * `DefaultRequestHandler` and JSON-RPC transport on 127.0.0.1, with an executor that answers fast,
 * slowly (and honours CancelTask), fails, or — `garbage` — a transport that answers what is not JSON-RPC.
 * The SDK's own push sender posts each task event to the push config Switchboard gives it.
 * `npm run bench -- agents` uses the same `fast` peer.
 */

export type PeerMode = 'fast' | 'slow' | 'fail' | 'garbage';

export interface Peer {
  name: string;
  url: string;
  cardUrl: string;
  card: AgentCard;
  /** SendMessage calls received. */
  calls: number;
  cancels: number;
  /** The Authorization header of each call. */
  auth: string[];
  /** The push URL each SendMessage carried. */
  /** Push URLs it was given (inline in SendMessage or by CreateTaskPushNotificationConfig). */
  pushUrls: string[];
  delayMs: number;
  close(): Promise<void>;
}

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

export function peerCard(name: string, url: string, skills: readonly string[]): AgentCard {
  return {
    name,
    description: `test agent ${name}`,
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    capabilities: { streaming: false, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skills.map((id) => ({
      id,
      name: id,
      description: `does ${id}`,
      tags: [],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

export async function sdkPeer(
  name: string,
  skills: readonly string[],
  mode: PeerMode,
  delayMs = mode === 'slow' ? 5_000 : 0,
): Promise<Peer> {
  const canceled = new Set<string>();
  const wakers = new Map<string, () => void>();
  const peer: Peer = {
    name,
    url: '',
    cardUrl: '',
    card: peerCard(name, '', skills),
    calls: 0,
    cancels: 0,
    auth: [],
    pushUrls: [],
    delayMs,
    close: async () => {},
  };
  const status = (state: TaskState, said?: string): TaskStatus => ({
    state,
    message: said
      ? {
          messageId: crypto.randomUUID(),
          contextId: '',
          taskId: '',
          role: 2,
          parts: [text(said)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }
      : undefined,
    timestamp: new Date().toISOString(),
  });
  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      const input = ctx.userMessage.parts
        .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
        .join('');
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [ctx.userMessage],
          metadata: {},
        }),
      );
      // A slow job says it is working; a fast one goes from the task to its result (3 pushes).
      if (peer.delayMs > 0) {
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(TaskState.TASK_STATE_WORKING),
            metadata: {},
          }),
        );
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, peer.delayMs);
          wakers.set(taskId, () => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      wakers.delete(taskId);
      if (canceled.has(taskId)) {
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(TaskState.TASK_STATE_CANCELED),
            metadata: {},
          }),
        );
      } else if (mode === 'fail') {
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(TaskState.TASK_STATE_FAILED, 'no analysis today'),
            metadata: {},
          }),
        );
      } else {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'result',
              name: 'result',
              description: '',
              parts: [text(`${name} analysed: ${input}`)],
              metadata: {},
              extensions: [],
            },
            append: false,
            lastChunk: true,
            metadata: {},
          }),
        );
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(TaskState.TASK_STATE_COMPLETED),
            metadata: {},
          }),
        );
      }
      bus.finished();
    },
    async cancelTask(taskId) {
      peer.cancels += 1;
      canceled.add(taskId);
      wakers.get(taskId)?.();
    },
  };

  const app = new Hono();
  let card: AgentCard | undefined;
  let transport: JsonRpcTransportHandler | undefined;
  app.get(`/${AGENT_CARD_PATH}`, (c) => c.json(AgentCard.toJSON(card!) as object));
  app.post('/rpc', async (c) => {
    const body = (await c.req.json()) as {
      method?: string;
      params?: { url?: string; configuration?: { taskPushNotificationConfig?: { url?: string } } };
    };
    if (body.method === 'SendMessage') {
      peer.calls += 1;
      peer.auth.push(c.req.header('authorization') ?? '');
      const inline = body.params?.configuration?.taskPushNotificationConfig?.url;
      if (inline) peer.pushUrls.push(inline);
    }
    if (body.method === 'CreateTaskPushNotificationConfig') peer.pushUrls.push(body.params?.url ?? '');
    if (mode === 'garbage')
      return c.body('<html>surprise</html>', 200, { 'content-type': 'application/json' });
    const ctx = new ServerCallContext({
      user: new UnauthenticatedUser(),
      ...(c.req.header('a2a-version') ? { requestedVersion: c.req.header('a2a-version')! } : {}),
    });
    const out = await transport!.handle(body, ctx);
    if (Symbol.asyncIterator in (out as object)) return c.json({ error: 'streaming is not offered' }, 400);
    return c.json(out as object);
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  peer.url = `http://127.0.0.1:${port}`;
  peer.cardUrl = `${peer.url}/${AGENT_CARD_PATH}`;
  card = peerCard(name, `${peer.url}/rpc`, skills);
  peer.card = card;
  transport = new JsonRpcTransportHandler(new DefaultRequestHandler(card, new InMemoryTaskStore(), executor));
  peer.close = async () => {
    for (const w of wakers.values()) w();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    });
  };
  return peer;
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
