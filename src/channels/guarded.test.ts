import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testEgress } from '../egress/testing.js';
import { NOW, sampleMessage } from './channel.case.js';
import { email, guardedSmtp } from './email/index.js';
import { ntfy } from './ntfy/index.js';
import { json, type Receiver, startReceiver } from './testing.js';

const failPost = async (): Promise<never> => {
  throw new Error('unused');
};

describe('egress.post: channels through the guarded sender', () => {
  let rx: Receiver;
  afterEach(() => rx.close());

  it('delivers to a target that egress.allow lists', async () => {
    rx = await startReceiver(() => json(200, { id: 'm1', event: 'message' }));
    const post = testEgress(['127.0.0.1']).post;
    const config = ntfy.configSchema.parse({ type: 'ntfy', url: rx.url, topic: 'agents' });
    expect(
      await ntfy.send(sampleMessage(), config, { post, now: () => NOW, secret: () => undefined }),
    ).toEqual({
      kind: 'ok',
      providerId: 'm1',
    });
  });

  it('reports a loopback target that egress.allow does not list as dead, without sending', async () => {
    rx = await startReceiver(() => json(200, { id: 'm1', event: 'message' }));
    const post = testEgress([]).post;
    const config = ntfy.configSchema.parse({ type: 'ntfy', url: rx.url, topic: 'agents' });
    const res = await ntfy.send(sampleMessage(), config, { post, now: () => NOW, secret: () => undefined });
    expect(res).toMatchObject({ kind: 'dead', reason: expect.stringContaining('egress refused') });
    expect(rx.requests).toHaveLength(0);
  });

  it('turns a connection refused into retry', async () => {
    rx = await startReceiver(() => json(200, {}));
    await rx.close();
    const post = testEgress(['127.0.0.1']).post;
    const config = ntfy.configSchema.parse({ type: 'ntfy', url: rx.url, topic: 'agents' });
    const res = await ntfy.send(sampleMessage(), config, { post, now: () => NOW, secret: () => undefined });
    expect(res.kind).toBe('retry');
    rx = { url: '', requests: [], close: async () => {} };
  });
});

describe('guardedSmtp: email under the same egress policy', () => {
  it('refuses a loopback SMTP host that egress.allow does not list, and connects when it does', async () => {
    let connections = 0;
    const sockets = new Set<Socket>();
    const server = createServer((sock) => {
      connections++;
      sockets.add(sock);
      sock.end('554 5.3.2 no service here\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const config = email.configSchema.parse({
      type: 'email',
      host: '127.0.0.1',
      port,
      from: 'a@example.com',
      to: ['b@example.com'],
    });
    const deps = (allow: string[]) => ({
      post: failPost,
      now: () => NOW,
      secret: () => undefined,
      smtp: guardedSmtp(testEgress(allow), { timeoutMs: 5000 }),
    });
    expect(await email.send(sampleMessage(), config, deps([]))).toMatchObject({
      kind: 'dead',
      reason: expect.stringContaining('egress refused'),
    });
    expect(connections).toBe(0);
    expect(await email.send(sampleMessage(), config, deps(['127.0.0.1']))).toMatchObject({
      kind: 'dead',
      reason: expect.stringContaining('SMTP 554'),
    });
    expect(connections).toBe(1);
    for (const sock of sockets) sock.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});
