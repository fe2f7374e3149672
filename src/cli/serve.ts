import { handleSignals, startServer } from '../server/serve.js';
import { existsSync } from 'node:fs';
import { loadCliConfig } from './context.js';
import { lintConfigFile } from './policy.js';
import { channelWarnings, noKeysMessage, startupSummary, tallyKeys, usableKeyCount } from './startup.js';

export interface ServeOptions {
  config?: string;
  host?: string;
  port?: string;
  /** Start even when no key can authenticate (a gateway that answers 401 to every /v1 request). */
  allowNoKeys?: boolean;
}

export async function run(opts: ServeOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const loaded = loadCliConfig(opts);
  const config = loaded.config;
  if (opts.host) config.server.host = opts.host;
  if (opts.port) {
    const port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port must be a port number, got ${opts.port}`);
    config.server.port = port;
  }
  assertPolicyLints(loaded.source);
  const keys = tallyKeys(config.auth.keys, env);
  if (usableKeyCount(keys) === 0 && !opts.allowNoKeys) throw new Error(noKeysMessage(keys));
  const server = await startServer(config, { configSource: loaded.source });
  // For people, on stderr; the JSON log on stdout stays one object per line.
  process.stderr.write(
    `switchboard ready (${loaded.source})\n${startupSummary(config, env, server.url)
      .map((l) => `  ${l}\n`)
      .join('')}${channelWarnings(config, env)
      .map((l) => `${l}\n`)
      .join('')}`,
  );
  handleSignals(server, config.server.shutdown_timeout_ms);
}

/**
 * A policy that does not compile at start would leave the gateway never ready (`/readyz` 503) while
 * it listens: stop instead, with the lint's lines. A broken edit while running keeps the serving revision.
 */
function assertPolicyLints(source: string): void {
  if (!existsSync(source)) return; // built-in defaults: no rules
  const lint = lintConfigFile(source);
  if (lint.ok) return;
  throw new Error(
    `the policy does not compile, so the gateway would never be ready:\n${lint.lines.map((l) => `  ${l}`).join('\n')}\nfix it (switchboard policy lint) and start again`,
  );
}
