import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigWith, CORE_CONFIG } from '../config/load.js';
import { ReloadHub } from '../kernel/reload.js';
import { TargetRefusedError } from './egress.js';
import { liveEgress } from './live.js';
import { loopbackOnly, noDns, testEgress } from './testing.js';

/** Issue 21 point 1: `egress.allow` is reloaded while the gateway runs, sockets of the old list included. */
let server: Server;
let base = '';
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const post = (e: ReturnType<typeof testEgress>) => e.post({ url: `${base}/in`, headers: {}, body: '{}' });

describe('egress.reload', () => {
  it('lets a newly listed host through, and refuses it again once it is taken off', async () => {
    const egress = testEgress([]);
    await expect(post(egress)).rejects.toBeInstanceOf(TargetRefusedError);
    expect(egress.reload(['127.0.0.1'])).toBe(true);
    expect((await post(egress)).status).toBe(200);
    expect(egress.reload(['127.0.0.1'])).toBe(false);
    expect(egress.reload([])).toBe(true);
    await expect(post(egress)).rejects.toThrow(/egress refused: https_required/);
    expect((await egress.check(`${base}/in`)).kind).toBe('blocked');
    await egress.close();
  });

  it('does not reach a host taken off the list over a socket kept alive under the old list', async () => {
    const egress = testEgress(['127.0.0.1']);
    // Straight through the dispatcher (no early check): only the connect-time guard stands in the way.
    const first = await request(`${base}/keep`, {
      method: 'POST',
      body: '{}',
      dispatcher: egress.dispatcher,
    });
    await first.body.text();
    expect(first.statusCode).toBe(200);
    const before = hits;
    egress.reload([]);
    await expect(
      request(`${base}/keep`, { method: 'POST', body: '{}', dispatcher: egress.dispatcher }),
    ).rejects.toThrow(/private_address|egress/i);
    expect(hits).toBe(before);
    await egress.close();
  });
});

describe('liveEgress', () => {
  const config = (allow: string[]) => parseConfigWith(CORE_CONFIG, { egress: { allow } });

  it('follows the reloaded config until it is closed', async () => {
    const hub = new ReloadHub();
    const egress = liveEgress({ config: config([]), reloads: hub }, { dial: loopbackOnly, resolve: noDns });
    await expect(post(egress)).rejects.toBeInstanceOf(TargetRefusedError);
    expect(hub.publish(config(['127.0.0.1']))).toEqual([]);
    expect((await post(egress)).status).toBe(200);
    await egress.close();
    hub.publish(config([]));
    expect(egress.policy.nets.length).toBe(1);
  });
});
