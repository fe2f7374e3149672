import { existsSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { serve as listen, type ServerType } from '@hono/node-server';
import type { CoreConfig } from '../config/schema.js';
import { Kernel } from '../kernel/kernel.js';
import type { App, Module, Services } from '../kernel/module.js';
import { createApp } from './app.js';
import { allModules, appMigrations, withAppModules } from './modules.js';
import { type BuildOptions, buildServices } from './services.js';
import { ReloadHub } from '../kernel/reload.js';
import { configSpec } from './config.js';
import { watchConfig } from './reload.js';

export interface RunningServer {
  app: App;
  services: Services;
  kernel: Kernel;
  url: string;
  port: number;
  /** Graceful: stop accepting, finish in-flight requests and workers, flush, close the store. */
  stop(): Promise<void>;
}

export async function startServer(
  config: CoreConfig,
  opts: BuildOptions & {
    modules?: readonly Module[];
    /** Read the config file again on SIGHUP and when it changes (default true when served from a file). */
    watchConfig?: boolean;
  } = {},
): Promise<RunningServer> {
  const modules = opts.modules ?? allModules();
  const stopping = new AbortController();
  const reloads = opts.reloads ?? new ReloadHub();
  // Every app module's tables exist even when a test runs a few modules, as they always have.
  const services = await buildServices(config, {
    migrations: appMigrations(withAppModules(modules)),
    ...opts,
    stopping: stopping.signal,
    reloads,
  });
  const kernel = new Kernel(services, modules);
  const app = createApp(services, kernel);
  await kernel.start();
  services.relay.start();
  const configWatch =
    opts.watchConfig === false || !existsSync(services.configSource)
      ? undefined
      : watchConfig({
          path: services.configSource,
          spec: configSpec(withAppModules(modules)),
          serving: config.egress.allow,
          hub: reloads,
          logger: services.logger,
          ...(opts.env ? { env: opts.env } : {}),
        });

  const server: ServerType = await new Promise((resolve, reject) => {
    const s = listen({ fetch: app.fetch, hostname: config.server.host, port: config.server.port }, () =>
      resolve(s),
    );
    s.once('error', reject);
  });
  server.on('connection', lingerOnClose);
  const port = (server.address() as AddressInfo).port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${host}:${port}`;
  services.logger.info(
    { url, store: services.db.dialect, config: services.configSource },
    `switchboard listening on ${url}`,
  );
  const { host: listenHost, public_url, allowed_hosts } = config.server;
  if (!isLoopbackHost(listenHost) && !public_url && allowed_hosts.length === 0) {
    // Not an error: IP addresses and localhost still work. But a proxy or a DNS name would get 403.
    services.logger.warn(
      { host: listenHost },
      'listening beyond loopback with neither server.public_url nor server.allowed_hosts: requests that name this gateway by a host name are refused (403 host_not_allowed)',
    );
  }

  let draining: Promise<void> | undefined;
  const stop = () => {
    draining ??= (async () => {
      // Held hooks end now with no decision, so the close below is not kept waiting by them.
      stopping.abort();
      configWatch?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive sockets would hold close() open until they time out.
      (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      await closed;
      await services.relay.stop();
      await kernel.stop();
      await services.db.close();
      services.logger.flush?.();
    })();
    return draining;
  };
  return { app, services, kernel, url, port, stop };
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/**
 * How long a connection we end still reads what the client sends (nginx's lingering close). Closing a
 * socket with unread bytes in it makes the kernel send a reset, and a reset can destroy the answer
 * the client has not read yet: the 413 that says why. So: send the answer and our FIN, keep reading
 * and dropping until the client closes its side or this runs out, then close.
 */
export const LINGER_MS = 2000;

/**
 * Node ends a connection after an answer with `connection: close` (and @hono/node-server after a
 * body it could not drain) by `socket.destroySoon()`: end, then destroy as soon as our side is
 * written, with whatever the client is still sending unread. This socket lingers instead.
 * server.test.ts drives it with raw sockets.
 */
function lingerOnClose(socket: Socket): void {
  let lingering = false;
  socket.destroySoon = () => {
    if (lingering || socket.destroyed) return;
    lingering = true;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    // The client's FIN: it read what it wanted; close once our side is written.
    socket.once('end', () =>
      socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy()),
    );
    if (socket.readableEnded) socket.once('finish', () => socket.destroy());
    socket.end();
    socket.resume();
  };
}

/** Wires SIGINT/SIGTERM: the first signal drains and exits; a second one exits at once. */
export function handleSignals(server: RunningServer, timeoutMs: number): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      server.services.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    signalled = true;
    server.services.logger.info(
      { signal },
      'shutting down: finishing in-flight work (send the signal again to exit at once)',
    );
    const timer = setTimeout(() => {
      server.services.logger.error({ timeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    server.stop().then(
      () => process.exit(0),
      (err) => {
        server.services.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
