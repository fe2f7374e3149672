import { runtimeFor, RUNTIME_KINDS } from '../runtimes/index.js';
import type { RuntimeAdapter } from '../runtimes/runtime.js';
import { post } from './post.js';
import {
  BRIDGE_HEADER,
  type BridgeReply,
  DEADLINE_HEADER,
  HOOK_ROUTE,
  isBridgeReply,
} from '../runtimes/http/protocol.js';
import { replyWithoutGate, START_GATEWAY_HINT } from '../runtimes/http/fail-closed.js';
import { type BridgeSettings, bridgeSettings } from './settings.js';

/**
 * `switchboard hook <runtime>`: the command-hook bridge. It forwards the runtime's JSON to the gateway
 * and writes back the native reply. When no answer comes, it decides alone: the runtime's deny for a
 * blocking call on a tool not known read-only (unless configured open), the neutral reply otherwise.
 *
 * It imports only the adapters and `node:` modules, so it starts about as fast as node itself.
 */

export interface BridgeInput {
  runtime: string;
  /** Arguments after the runtime; Codex's `notify` passes its JSON as the last one. */
  args: string[];
  readStdin: () => Promise<Uint8Array>;
  env: NodeJS.ProcessEnv;
  home: string;
}

export async function runBridge(input: BridgeInput): Promise<BridgeReply> {
  const adapter = runtimeFor(input.runtime);
  if (!adapter) {
    // Exit 2 blocks in every command runtime: a misspelt runtime must not wave tools through.
    return {
      exitCode: 2,
      stdout: '',
      stderr: `switchboard: unknown runtime ${JSON.stringify(input.runtime)}; known: ${RUNTIME_KINDS.join(', ')}\n`,
    };
  }
  const last = input.args.at(-1);
  const body = last !== undefined ? new TextEncoder().encode(last) : await input.readStdin();
  const settings = bridgeSettings(adapter, input.env, input.home);
  return forward(adapter, body, settings);
}

export async function forward(
  adapter: RuntimeAdapter,
  body: Uint8Array,
  settings: BridgeSettings,
): Promise<BridgeReply> {
  const fallback = (reason: string) =>
    strip(replyWithoutGate(adapter, adapter.normalize(body), settings.fail, reason));
  let url: URL;
  try {
    url = new URL(HOOK_ROUTE(adapter.kind), settings.url);
  } catch {
    return fallback(`Switchboard gateway URL is invalid: ${JSON.stringify(settings.url)}`);
  }
  if (!settings.key)
    return fallback('SWITCHBOARD_KEY is not set, so the Switchboard gateway cannot be asked');

  const outcome = await post(
    url,
    body,
    {
      'content-type': 'application/json',
      authorization: `Bearer ${settings.key}`,
      [BRIDGE_HEADER]: '1',
      [DEADLINE_HEADER]: String(settings.timeoutMs),
    },
    settings.timeoutMs,
  );
  const where = url.origin;
  if (outcome.kind === 'failed')
    return fallback(`Switchboard gateway unreachable at ${where}: ${outcome.why}; ${START_GATEWAY_HINT}`);
  if (outcome.status >= 500) {
    return fallback(
      `Switchboard gateway unreachable at ${where}: it answered ${outcome.status}; ${START_GATEWAY_HINT}`,
    );
  }
  const reply = parse(outcome.body);
  if (reply) return reply;
  // 401, 403, 404, 413 …: the gateway is up but would not take this hook; the same rule applies.
  return fallback(
    `Switchboard gateway at ${where} refused the hook: ${outcome.status} ${errorMessage(outcome.body)}`,
  );
}

function parse(text: string): BridgeReply | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isBridgeReply(value) ? strip(value) : undefined;
  } catch {
    return undefined;
  }
}

/** Only the three fields, whatever else came: the bridge writes exactly what the adapter decided. */
function strip(r: BridgeReply): BridgeReply {
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

function errorMessage(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && typeof e.code === 'string')
      return `${e.code}${typeof e.message === 'string' ? `: ${e.message}` : ''}`;
  } catch {
    // not JSON: fall through
  }
  return '(no error body)';
}
