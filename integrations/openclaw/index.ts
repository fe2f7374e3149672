import {
  DEFAULT_TIMEOUT_MS,
  DEFAULT_URL,
  type GatewayOptions,
  askGateway,
  notifyGateway,
  payloadFor,
} from './gateway.js';

/**
 * The Switchboard plugin for OpenClaw: `before_tool_call` asks the gateway and returns its answer as
 * `block` / `params` / `requireApproval`; a few observer hooks are recorded without waiting.
 * Config (`plugins.entries.switchboard.config`): `url`, `keyEnv` (the name of the variable holding the
 * key, never the key), `timeoutMs`; otherwise SWITCHBOARD_URL and SWITCHBOARD_KEY.
 */

type Handler = (event: Record<string, unknown>, ctx?: Record<string, unknown>) => unknown;

/** The slice of OpenClaw's plugin API this plugin uses. */
export interface PluginApi {
  pluginConfig?: unknown;
  on(name: string, handler: Handler, opts?: { priority?: number; timeoutMs?: number }): void;
}

/** Hooks recorded without waiting for an answer. */
export const OBSERVED_HOOKS = ['after_tool_call', 'session_start', 'session_end', 'agent_end'] as const;

/** High, so Switchboard's block is seen before lower-priority plugins act on the call. */
export const GATE_PRIORITY = 1000;

export function optionsFrom(config: unknown, env: NodeJS.ProcessEnv = process.env): GatewayOptions {
  const c = typeof config === 'object' && config !== null ? (config as Record<string, unknown>) : {};
  const keyEnv = typeof c.keyEnv === 'string' ? c.keyEnv : 'SWITCHBOARD_KEY';
  const options: GatewayOptions = {
    url: typeof c.url === 'string' ? c.url : (env.SWITCHBOARD_URL ?? DEFAULT_URL),
    timeoutMs: typeof c.timeoutMs === 'number' && c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_TIMEOUT_MS,
  };
  const key = env[keyEnv];
  if (key) options.key = key;
  return options;
}

export function register(api: PluginApi, options: GatewayOptions = optionsFrom(api.pluginConfig)): void {
  api.on(
    'before_tool_call',
    (event, ctx) => askGateway(payloadFor('before_tool_call', event, ctx), options),
    { priority: GATE_PRIORITY },
  );
  for (const hook of OBSERVED_HOOKS) {
    api.on(hook, (event, ctx) => {
      void notifyGateway(payloadFor(hook, event, ctx), options);
    });
  }
}

export default {
  id: 'switchboard',
  name: 'Switchboard',
  description: 'Asks the Switchboard gateway before every tool call and records what the agent did.',
  register,
};
