import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

/** The NATS the tests use; CI sets SWITCHBOARD_REQUIRE_NATS=1 so an unreachable one fails instead of skipping. */
export const NATS_URL = process.env.SWITCHBOARD_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const NATS_REQUIRED = process.env.SWITCHBOARD_REQUIRE_NATS === '1';
/** The server binary for tests that stop and restart a NATS of their own. */
export const NATS_SERVER_BIN = process.env.SWITCHBOARD_NATS_SERVER ?? '/usr/sbin/nats-server';

let reachable: Promise<boolean> | undefined;

/** Whether the shared NATS (with JetStream) answers; skips with a message, or throws when required. */
export function natsAvailable(): Promise<boolean> {
  reachable ??= (async () => {
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false });
      await (await jetstreamManager(nc)).getAccountInfo();
      return true;
    } catch (err) {
      if (NATS_REQUIRED)
        throw new Error(
          `NATS JetStream at ${NATS_URL} is required (SWITCHBOARD_REQUIRE_NATS=1) but unreachable: ${(err as Error).message}`,
        );
      process.stderr.write(
        `skipping NATS tests: JetStream at ${NATS_URL} unreachable (${(err as Error).message}); set SWITCHBOARD_TEST_NATS_URL or start nats-server -js\n`,
      );
      return false;
    } finally {
      await nc?.close().catch(() => {});
    }
  })();
  return reachable;
}

/** A port nothing listens on right now (taken and released by the OS). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * A NATS server of the test's own, on a fixed port with its JetStream store in a temp dir, so the test
 * can stop it and start it again (the store survives) without touching the shared one.
 */
export class PrivateNats {
  private proc: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'sb-nats-'));
  constructor(readonly port: number) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const proc = spawn(
      NATS_SERVER_BIN,
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir],
      {
        stdio: 'ignore',
      },
    );
    this.proc = proc;
    const until = Date.now() + 10_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`nats-server exited with ${proc.exitCode}`);
      if (await listening(this.port)) return;
      if (Date.now() > until) throw new Error(`nats-server did not listen on ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1');
  });
}
