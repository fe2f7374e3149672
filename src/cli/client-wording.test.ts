import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as approvals from './approvals.js';
import * as away from './away.js';
import * as dlq from './dlq.js';
import * as incidents from './incidents.js';
import * as ingress from './ingress.js';
import * as reach from './reach.js';
import * as tasks from './tasks.js';

/**
 * One wording for the three ways a client command fails before the gateway says anything of substance:
 * no key, gateway unreachable, key refused (401). Every client command, driven against a closed port
 * and a real local server that answers 401 to everything.
 */

let server: Server;
let refusing = '';
/** A port nothing listens on (port 1 would not do: fetch refuses it before connecting). */
let closed = '';
beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise<void>((r) => probe.close(() => r()));
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'A valid bearer key is required.' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  refusing = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const quiet = { out: () => {} };
const commands: Record<string, (env: NodeJS.ProcessEnv) => Promise<unknown>> = {
  'approvals list': (env) => approvals.list({ env, ...quiet }),
  'incidents freeze': (env) => incidents.freeze({ agent: 'a', env }),
  'away status': (env) => away.run('status', { env, ...quiet }),
  'dlq list': (env) => dlq.list({ env, ...quiet }),
  'tasks list': (env) => tasks.list({ env, ...quiet }),
  'tools list': (env) => reach.listTools({ env, ...quiet }),
  touch: (env) => reach.touch('t.x', '{}', { env, ...quiet }),
  'ingress replay': (env) => ingress.replay('d1', {}, env),
};

describe.each(Object.entries(commands))('%s', (_name, run) => {
  it('says the same thing when no key is found', async () => {
    await expect(run({ SWITCHBOARD_URL: refusing })).rejects.toThrow(
      /^no key for the gateway: set SWITCHBOARD_KEY to an? [a-z ]+ key \(`switchboard keys show <name>` prints one\), or run this in the gateway's folder/,
    );
  });

  it('says the same thing when the gateway is unreachable', async () => {
    await expect(run({ SWITCHBOARD_URL: closed, SWITCHBOARD_KEY: 'k'.repeat(24) })).rejects.toThrow(
      `Switchboard gateway unreachable at ${closed} (ECONNREFUSED); start it with \`switchboard serve\` in its folder, or point SWITCHBOARD_URL at it`,
    );
  });

  it('says the same thing when the key is refused', async () => {
    await expect(run({ SWITCHBOARD_URL: refusing, SWITCHBOARD_KEY: 'k'.repeat(24) })).rejects.toThrow(
      `the gateway at ${refusing} refused the key (401): it is not one of its keys`,
    );
  });
});
