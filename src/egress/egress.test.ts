import type { LookupFunction } from 'node:net';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dial } from './dispatcher.js';
import { TargetRefusedError } from './egress.js';
import type { Resolver } from './ssrf.js';
import { capturingPost, loopbackGuard, testEgress } from './testing.js';

/** A receiver on 127.0.0.1 that echoes what it got; `/hang` never answers. */
const got: { method: string; url: string; body: string }[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      got.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(parts).toString('utf8') });
      if (req.url === '/hang') return;
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'X-Trace': 'abc' }).end('answer');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const json = { 'content-type': 'application/json' };

describe('egress.post, the one post adapter', () => {
  it('returns an answer of any status with lower-case header names', async () => {
    const egress = testEgress(['127.0.0.1']);
    const answer = await egress.post({ url: `${base}/missing`, headers: json, body: '{"a":1}' });
    expect(answer).toEqual({
      status: 404,
      headers: expect.objectContaining({ 'x-trace': 'abc' }),
      body: 'answer',
    });
    expect(got.at(-1)).toEqual({ method: 'POST', url: '/missing', body: '{"a":1}' });
    await egress.close();
  });

  it('throws TargetRefusedError with the guard’s reason for a target egress.allow does not list, sending nothing', async () => {
    const egress = testEgress([], { httpsOnly: false });
    const before = got.length;
    const refused = await egress
      .post({ url: `${base}/ok`, headers: json, body: '{}' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TargetRefusedError);
    expect((refused as TargetRefusedError).message).toMatch(/^egress refused: private_address: /);
    expect((refused as TargetRefusedError).blocked).toMatchObject({ reason: 'private_address' });
    expect(got.length).toBe(before);
    await egress.close();
  });

  it('throws an error whose code names a refused connection, and shows the raw attempt to the observer', async () => {
    const closed = createNetServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const egress = testEgress(['127.0.0.1']);
    const capture = capturingPost(egress);
    const err = await capture
      .post({ url: `http://127.0.0.1:${port}/`, headers: {}, body: '' })
      .catch((e) => e);
    expect(err).toMatchObject({ message: 'send failed: refused', code: 'ECONNREFUSED' });
    expect(capture.results).toEqual([expect.objectContaining({ sent: false, error: 'refused' })]);
    await egress.close();
  });

  it('caps the request’s own timeout at the caller’s budget', async () => {
    const egress = testEgress(['127.0.0.1']);
    const capture = capturingPost(egress, { maxTimeoutMs: 100 });
    const started = Date.now();
    await expect(
      capture.post({ url: `${base}/hang`, headers: {}, body: '', timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ message: 'send failed: timeout' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(capture.results[0]).toMatchObject({ sent: true, error: 'timeout' });
    await egress.close();
  });
});

describe('egress.send, egress.check and egress.resolveHost', () => {
  it('sends a GET without a body (the ingress re-read)', async () => {
    const egress = testEgress(['127.0.0.1']);
    const r = await egress.send({
      url: `${base}/pulls/7`,
      method: 'GET',
      headers: { accept: 'application/json' },
    });
    expect(r).toMatchObject({ sent: true, status: 200, body: 'answer' });
    expect(got.at(-1)).toEqual({ method: 'GET', url: '/pulls/7', body: '' });
    await egress.close();
  });

  it('checks a URL early, naming the reason, without sending', async () => {
    const egress = testEgress(['169.254.0.0/16'], { httpsOnly: false });
    expect(await egress.check('http://169.254.169.254/latest/meta-data/')).toMatchObject({
      kind: 'blocked',
      reason: 'metadata',
    });
    expect(await egress.check(`${base}/ok`)).toMatchObject({ kind: 'blocked', reason: 'private_address' });
    await egress.close();
  });

  it('judges an IP literal for SMTP without asking DNS, and a listed name through the resolver', async () => {
    const resolve: Resolver = async (host) => {
      if (host !== 'smtp.internal') throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const listed = testEgress(['127.0.0.1', 'smtp.internal'], { resolve });
    expect(await listed.resolveHost('127.0.0.1')).toBe('127.0.0.1');
    expect(await listed.resolveHost('smtp.internal')).toBe('127.0.0.1');
    const unlisted = testEgress([], { resolve });
    await expect(unlisted.resolveHost('127.0.0.1')).rejects.toMatchObject({
      name: 'TargetRefusedError',
      blocked: { reason: 'private_address' },
    });
    await expect(unlisted.resolveHost('169.254.169.254')).rejects.toMatchObject({
      blocked: { reason: 'metadata' },
    });
    await expect(unlisted.resolveHost('smtp.internal')).rejects.toMatchObject({
      blocked: { reason: 'private_address' },
    });
    await listed.close();
    await unlisted.close();
  });

  it('closes a dispatcher it built and leaves an injected one to its owner', async () => {
    const owner = testEgress(['127.0.0.1']);
    const borrowing = testEgress(['127.0.0.1'], { dispatcher: owner.dispatcher });
    await borrowing.close();
    const get = { url: `${base}/ok`, method: 'GET' as const, headers: {} };
    expect(await owner.send(get)).toMatchObject({ status: 200 });
    await owner.close();
    expect((await owner.send(get)).error).toBeDefined();
  });
});

describe('the loopback-only safety net of the tests', () => {
  /** Records what it was asked to dial and never opens a socket. */
  function fakeDial(dialled: string[]): Dial {
    return (options) => (o, callback) => {
      const lookup = (options as { lookup: LookupFunction }).lookup;
      lookup(o.hostname, {}, (err, address) => {
        if (err) return callback(err, null);
        dialled.push(String(address));
        callback(null, {} as Socket);
      });
    };
  }
  const answering =
    (address: string): LookupFunction =>
    (_host, _options, callback) =>
      callback(null, address, 4);
  const connect = (dial: Dial, hostname: string, lookup: LookupFunction) =>
    new Promise<Error | null>((resolve) =>
      dial({ lookup } as buildConnector.BuildOptions)(
        { hostname, protocol: 'http:', port: '80' },
        (...args) => resolve(args[0]),
      ),
    );

  it('refuses a literal that is not loopback before the socket layer sees it', async () => {
    const dialled: string[] = [];
    const err = await connect(
      loopbackGuard(fakeDial(dialled)),
      '169.254.169.254',
      answering('169.254.169.254'),
    );
    expect(err).toMatchObject({ code: 'ERR_TEST_NOT_LOOPBACK' });
    expect(dialled).toEqual([]);
  });

  it('refuses a name whose lookup answers an address that is not loopback, and dials loopback', async () => {
    const dialled: string[] = [];
    const guard = loopbackGuard(fakeDial(dialled));
    expect(await connect(guard, 'rebind.example.com', answering('10.0.0.1'))).toMatchObject({
      code: 'ERR_TEST_NOT_LOOPBACK',
    });
    expect(await connect(guard, 'receiver.internal', answering('127.0.0.1'))).toBeNull();
    expect(await connect(guard, '::1', answering('::1'))).toBeNull();
    expect(dialled).toEqual(['127.0.0.1', '::1']);
  });
});
