import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { replay } from '../../src/cli/dlq.js';
import { deliveryModule } from '../../src/delivery/module.js';
import { createLogger } from '../../src/kernel/logger.js';
import { notifyModule } from '../../src/notify/module.js';
import { loadConfig } from '../../src/server/config.js';
import { coreModule } from '../../src/server/core-routes.js';
import { type RunningServer, startServer } from '../../src/server/serve.js';
import { KEYS } from '../../src/server/testing.js';
import { dialects, freshStore, type TestStore } from '../../src/store/testing.js';

/**
 * Issue 21 point 1, the last part: a channel the egress guard refused is fixed by editing `egress` in
 * the config file of a running gateway (or sending SIGHUP), and `dlq replay` then delivers the dead
 * letter under the list now serving; no restart. A broken edit is refused and changes nothing.
 */
const SECRET = `whsec_${Buffer.from('egress-reload-test-secret-32byte').toString('base64')}`;

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(await dialects())('egress reloaded while serving, on %s', (dialect) => {
  let store: TestStore | undefined;
  let dir: string | undefined;
  let gateway: RunningServer | undefined;
  let rx: Server | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await store?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
    rx?.closeAllConnections();
    await new Promise((r) => rx?.close(r));
  });

  it('refuses a loopback webhook, then delivers its dead letter on replay after the file is edited', async () => {
    const got: string[] = [];
    rx = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += String(c)));
      req.on('end', () => {
        got.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => rx!.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/in`;
    dir = mkdtempSync(join(tmpdir(), 'sb-egress-reload-'));
    const path = join(dir, 'switchboard.yaml');
    const write = (allow: string[] | string) =>
      writeFileSync(
        path,
        JSON.stringify({
          data_dir: dir,
          server: { port: 0 },
          auth: {
            keys: [
              { name: 'bot', role: 'agent', key: KEYS.agent },
              { name: 'ops', role: 'admin', key: KEYS.admin },
            ],
          },
          channels: { hook: { type: 'webhook', url: hookUrl, secret_env: 'HOOK_SECRET' } },
          routes: [{ match: 'true', channels: ['hook'] }],
          notify: { rate_per_minute: 0, priority_per_hour: 0, progress_merge_window_seconds: 0 },
          egress: { allow },
        }),
      );
    write([]);
    const lines: { msg?: string; trigger?: string; egress_added?: string[]; problems?: string[] }[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    store = await freshStore(dialect);
    const env = { HOOK_SECRET: SECRET };
    gateway = await startServer(loadConfig({ path, env }).config, {
      configSource: path,
      db: store.db,
      env,
      logger: createLogger('info', destination),
      defaultMetrics: false,
      modules: [coreModule(), deliveryModule({ env }), notifyModule()],
    });
    const base = gateway.url;
    const admin = { authorization: `Bearer ${KEYS.admin}` };

    const sent = await fetch(`${base}/v1/progress`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
      body: JSON.stringify({ stage: 'failed', summary: 'deploy failed', severity: 'critical' }),
    });
    expect(sent.status).toBe(200);
    const dead = await until('the blocked delivery to be dead', async () => {
      const res = await fetch(`${base}/v1/deliveries?status=dead`, { headers: admin });
      const list = (await res.json()) as { deliveries: { id: string; last_error?: string | null }[] };
      return list.deliveries[0];
    });
    expect(dead.last_error).toMatch(/https_required/);
    expect(got).toEqual([]);

    // A broken edit: refused with its problem, the serving list stays (nothing reaches the receiver).
    write('127.0.0.1');
    await until('the refused reload line', () =>
      lines.find((l) => l.msg?.startsWith('config reload refused')),
    );
    const refused = await replay({
      env: { SWITCHBOARD_URL: base, SWITCHBOARD_KEY: KEYS.admin },
      out: () => {},
      id: [dead.id],
    });
    expect(refused.replayed).toEqual([dead.id]);
    await until('the replayed delivery to die again', async () => {
      const res = await fetch(`${base}/v1/deliveries?status=dead`, { headers: admin });
      return ((await res.json()) as { deliveries: unknown[] }).deliveries.length === 1 || undefined;
    });
    expect(got).toEqual([]);

    // The fix, as a user makes it: the file edited in place; the watch reloads it.
    write(['127.0.0.1']);
    const loaded = await until('the reload line', () =>
      lines.find((l) => l.msg?.startsWith('config reloaded') && l.egress_added?.includes('127.0.0.1')),
    );
    expect(loaded.trigger).toBe('watch');
    const again = await replay({
      env: { SWITCHBOARD_URL: base, SWITCHBOARD_KEY: KEYS.admin },
      out: () => {},
      id: [dead.id],
    });
    expect(again.replayed).toEqual([dead.id]);
    await until('the webhook to arrive', async () => {
      return got.length === 1 || undefined;
    });
    expect(got[0]).toContain('deploy failed');

    // SIGHUP reads the file again too (the signal's listener, without signalling the test runner).
    write([]);
    await until('the watch to take the list away', () => lines.find((l) => l.msg?.includes('(+0 −1)')));
    write(['127.0.0.1']);
    process.emit('SIGHUP', 'SIGHUP');
    await until('the SIGHUP reload', () => lines.find((l) => l.trigger === 'sighup'));
  }, 60_000);
});
