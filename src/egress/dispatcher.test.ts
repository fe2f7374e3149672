import { type Server, createServer } from 'node:http';
import { type AddressInfo, type Socket, createServer as createNetServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from './dispatcher.js';
import { sendOnce } from './send.js';
import { type Resolver, checkUrl, compileEgressPolicy } from './ssrf.js';
import { loopbackOnly } from './testing.js';

let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits += 1;
    req.resume();
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/' }).end();
      return;
    }
    res.writeHead(200).end('reached');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

async function post(url: string, policy: ReturnType<typeof compileEgressPolicy>) {
  // Loopback-only sockets: a test naming 169.254.169.254 cannot reach it even if the guard broke.
  const dispatcher = createGuardedDispatcher(policy, { dial: loopbackOnly });
  try {
    return await sendOnce({
      url,
      body: '{}',
      headers: { 'content-type': 'application/json' },
      dispatcher,
      timeoutMs: 2_000,
    });
  } finally {
    await dispatcher.close();
  }
}

describe('the guarded dispatcher', () => {
  it('refuses a server on 127.0.0.1 that is not allow-listed, before connecting', async () => {
    const before = hits;
    const r = await post(`http://127.0.0.1:${port}/`, compileEgressPolicy([], { httpsOnly: false }));
    expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason: 'private_address' } });
    expect(hits).toBe(before);
  });

  it('reaches the same server once 127.0.0.1 is allow-listed', async () => {
    const r = await post(`http://127.0.0.1:${port}/`, compileEgressPolicy(['127.0.0.1']));
    expect(r).toMatchObject({ sent: true, status: 200, body: 'reached' });
  });

  it('refuses plain http to an unlisted name at connect time, without asking DNS', async () => {
    let asked = 0;
    const resolve: Resolver = async () => {
      asked += 1;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const r = await post(`http://hooks.example.com:${port}/`, compileEgressPolicy([], { resolve }));
    expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason: 'https_required' } });
    expect(asked).toBe(0);
  });

  it('catches DNS rebinding: public at check time, 127.0.0.1 at connect time', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => {
      lookups += 1;
      return [{ address: lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    };
    const policy = compileEgressPolicy([], { resolve: rebinding, httpsOnly: false });
    const url = `http://rebind.example.com:${port}/`;
    expect(await checkUrl(url, policy)).toMatchObject({ kind: 'allowed', address: '93.184.216.34' });
    const before = hits;
    const r = await post(url, policy);
    expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason: 'private_address' } });
    expect(r.blocked?.detail).toContain('rebind.example.com resolves to 127.0.0.1');
    expect(lookups).toBe(2);
    expect(hits).toBe(before);
  });

  it('connects to the address its resolver vouched for (a listed internal name)', async () => {
    const resolve: Resolver = async (host) => {
      if (host !== 'receiver.internal') throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const r = await post(
      `http://receiver.internal:${port}/`,
      compileEgressPolicy(['receiver.internal'], { resolve }),
    );
    expect(r).toMatchObject({ sent: true, status: 200, body: 'reached' });
  });

  it('reports a name that does not resolve as unresolvable and not sent', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    };
    const r = await post('https://nowhere.example.com/', compileEgressPolicy([], { resolve }));
    expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason: 'unresolvable' } });
  });

  it('refuses the metadata address even when its subnet is listed', async () => {
    const r = await post('http://169.254.169.254/latest/meta-data/', compileEgressPolicy(['169.254.0.0/16']));
    expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason: 'metadata' } });
  });

  it('does not follow a redirect to 169.254.169.254, which the guard would refuse anyway', async () => {
    const before = hits;
    const policy = compileEgressPolicy(['127.0.0.1']);
    const r = await post(`http://127.0.0.1:${port}/redirect`, policy);
    expect(r).toMatchObject({ sent: true, status: 302 });
    expect(hits).toBe(before + 1);
    expect(await checkUrl(r.headers?.location ?? '', policy)).toMatchObject({ kind: 'blocked' });
  });

  it('applies the connect-time lookup to https as well', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => {
      lookups += 1;
      return [{ address: lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    };
    const policy = compileEgressPolicy([], { resolve: rebinding });
    const url = `https://rebind.example.com:${port}/`;
    expect((await checkUrl(url, policy)).kind).toBe('allowed');
    const r = await post(url, policy);
    expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason: 'private_address' } });
  });

  it('dials the resolved address over https for a listed name', async () => {
    const held: Socket[] = [];
    const tcp = createNetServer((s) => held.push(s));
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const tcpPort = (tcp.address() as AddressInfo).port;
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const dispatcher = createGuardedDispatcher(compileEgressPolicy(['receiver.internal'], { resolve }), {
      dial: loopbackOnly,
    });
    const r = await sendOnce({
      url: `https://receiver.internal:${tcpPort}/`,
      body: '{}',
      headers: {},
      dispatcher,
      timeoutMs: 300,
    });
    for (const s of held) s.destroy();
    await dispatcher.close();
    await new Promise<void>((done) => tcp.close(() => done()));
    // The TLS handshake never finishes (the peer says nothing), but the connection reached it.
    expect(r).toMatchObject({ sent: false, error: 'timeout' });
    expect(held.length).toBe(1);
  });
});
