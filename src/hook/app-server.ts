import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { runtimeFor } from '../runtimes/index.js';
import {
  type ApprovalMethod,
  approvalHook,
  approvalResult,
  isApprovalMethod,
  notificationHook,
  readRpc,
  verdictOf,
} from '../runtimes/codex/app-server.js';
import type { BridgeReply } from '../runtimes/http/protocol.js';
import { forward } from './bridge.js';
import type { BridgeSettings } from './settings.js';

/**
 * `switchboard codex-app-server`: sits between a client (an IDE, a script) on its own stdio and
 * `codex app-server` as a child. Every line passes through unchanged, except the server's approval
 * requests: each is first decided by the gate through the `codex` hook route (as `switchboard hook`
 * posts a hook); an allow or deny is answered to the server at once and the client never sees the
 * request; no opinion forwards it to the client, whose own prompt decides as before. Tool items,
 * turns and threads are posted as observe-only events, in order, off the pass-through path.
 */

export const DEFAULT_APP_SERVER_COMMAND = ['codex', 'app-server'];

export interface AppServerBridgeOptions {
  /** argv of the server; default `codex app-server`. */
  command: readonly string[];
  settings: BridgeSettings;
  /** The client's side. */
  input: Readable;
  output: Writable;
  errors: Writable;
  env?: NodeJS.ProcessEnv;
  /** How the gate is asked (tests may count); default the hook bridge's `forward`. */
  ask?: (body: Uint8Array) => Promise<BridgeReply>;
}

/** Bounded memory of items by id: a v2 file-change request names its item, whose diff came before. */
const MAX_ITEMS = 1000;

export async function runAppServerBridge(o: AppServerBridgeOptions): Promise<number> {
  const adapter = runtimeFor('codex')!;
  const ask = o.ask ?? ((body) => forward(adapter, body, o.settings));
  const [bin, ...args] = o.command;
  if (!bin) throw new Error('no app-server command');
  const child: ChildProcess = spawn(bin, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: o.env ?? process.env,
  });
  const toServer = (value: unknown) => child.stdin?.write(`${JSON.stringify(value)}\n`);
  const toClient = (line: string) => o.output.write(`${line}\n`);
  child.stderr?.pipe(o.errors, { end: false });

  const items = new Map<string, Record<string, unknown>>();
  const remember = (item: Record<string, unknown>) => {
    if (typeof item.id !== 'string') return;
    items.delete(item.id);
    items.set(item.id, item);
    if (items.size > MAX_ITEMS) items.delete(items.keys().next().value as string);
  };

  // Observations go one after another, so the log sees them in the server's order.
  let observed: Promise<unknown> = Promise.resolve();
  const observe = (hook: Record<string, unknown>) => {
    const body = new TextEncoder().encode(JSON.stringify(hook));
    observed = observed.then(() => ask(body).catch(() => undefined));
  };
  const pending = new Set<Promise<void>>();

  const decide = async (
    line: string,
    id: string | number,
    method: ApprovalMethod,
    params: Record<string, unknown>,
  ) => {
    const item = typeof params.itemId === 'string' ? items.get(params.itemId) : undefined;
    const hook = approvalHook(method, params, item);
    let reply: BridgeReply;
    try {
      reply = await ask(new TextEncoder().encode(JSON.stringify(hook)));
    } catch (err) {
      reply = { exitCode: 2, stdout: '', stderr: (err as Error).message };
    }
    const verdict = verdictOf(reply);
    if (verdict.kind === 'client') {
      toClient(line);
      return;
    }
    toServer({ id, result: approvalResult(method, verdict.kind === 'accept') });
    if (verdict.kind === 'decline') o.errors.write(`switchboard: declined ${method}: ${verdict.reason}\n`);
  };

  const fromServer = createInterface({ input: child.stdout!, crlfDelay: Number.POSITIVE_INFINITY });
  fromServer.on('line', (line) => {
    const msg = readRpc(line);
    if (msg.kind === 'request' && isApprovalMethod(msg.method)) {
      const p = decide(line, msg.id, msg.method, msg.params).finally(() => pending.delete(p));
      pending.add(p);
      return;
    }
    toClient(line);
    if (msg.kind !== 'notification') return;
    if (msg.method === 'item/started' || msg.method === 'item/completed') {
      const item = msg.params.item;
      if (typeof item === 'object' && item !== null) remember(item as Record<string, unknown>);
    }
    const hook = notificationHook(msg.method, msg.params);
    if (hook) observe(hook);
  });

  const fromClient = createInterface({ input: o.input, crlfDelay: Number.POSITIVE_INFINITY });
  fromClient.on('line', (line) => child.stdin?.write(`${line}\n`));
  fromClient.on('close', () => child.stdin?.end());
  child.stdin?.on('error', () => {
    // The server went away while the client still wrote: its exit is reported below.
  });

  const code = await new Promise<number>((resolve) => {
    child.on('error', (err) => {
      o.errors.write(`switchboard: could not start ${JSON.stringify(bin)}: ${err.message}\n`);
      resolve(127);
    });
    child.on('close', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
  });
  fromClient.close();
  await Promise.allSettled([...pending]);
  await observed;
  return code;
}
