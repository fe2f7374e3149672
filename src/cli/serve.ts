import { handleSignals, startServer } from '../server/serve.js';
import { existsSync } from 'node:fs';
import { collectStartupGarbage, growWhenBusy, optimizeFromNowOn } from '../server/heap.js';
import { loadCliConfig } from './context.js';
import { lintConfigFile } from './policy.js';
import { createLogger } from '../kernel/logger.js';
import { LOG_FORMATS, prettyStream } from './log-format.js';
import { channelWarnings, noKeysMessage, startupSummary, tallyKeys, usableKeyCount } from './startup.js';

export interface ServeOptions {
  config?: string;
  host?: string;
  port?: string;
  /** Start even when no key can authenticate (a gateway that answers 401 to every /v1 request). */
  allowNoKeys?: boolean;
  /** `json` (default, for machines) or `pretty` (for people); env SWITCHBOARD_LOG_FORMAT. */
  logFormat?: string;
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
  const format = opts.logFormat ?? env.SWITCHBOARD_LOG_FORMAT ?? 'json';
  if (!(LOG_FORMATS as readonly string[]).includes(format))
    throw new Error(`--log-format must be ${LOG_FORMATS.join(' or ')}, got ${format}`);
  const logger = format === 'pretty' ? { logger: createLogger(config.log.level, prettyStream()) } : {};
  const server = await startServer(config, { configSource: loaded.source, ...logger }).catch(async (err) => {
    if ((err as { code?: string }).code !== 'EADDRINUSE') throw err;
    throw new Error(await portInUse(config.server.host, config.server.port));
  });
  // For people, on stderr; the JSON log on stdout stays one object per line.
  process.stderr.write(
    `switchboard ready (${loaded.source})\n${startupSummary(config, env, server.url)
      .map((l) => `  ${l}\n`)
      .join('')}${channelWarnings(config, env)
      .map((l) => `${l}\n`)
      .join('')}`,
  );
  handleSignals(server, config.server.shutdown_timeout_ms);
  optimizeFromNowOn();
  collectStartupGarbage();
  growWhenBusy();
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

/**
 * The port is taken: say by whom, if it is a gateway (its `/readyz` answers in our shape), and the two
 * ways out. The probe is one loopback-or-configured-host GET with a short deadline.
 */
export async function portInUse(host: string, port: number): Promise<string> {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const probeHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  let who = 'another program listens there';
  try {
    const res = await fetch(
      `http://${probeHost.includes(':') ? `[${probeHost}]` : probeHost}:${port}/readyz`,
      {
        signal: AbortSignal.timeout(2000),
      },
    );
    const body = (await res.json()) as { status?: unknown };
    if (body.status === 'ready' || body.status === 'not_ready')
      who = `another Switchboard gateway is running there (/readyz: ${body.status})`;
  } catch {
    // not HTTP, or not ours: the generic wording stands
  }
  return `port ${port} on ${host} is in use: ${who}. Stop it, or start this one on another port with --port <n> (or SWITCHBOARD_PORT); client commands then need SWITCHBOARD_URL=http://${where.replace(String(port), '<n>')}`;
}
