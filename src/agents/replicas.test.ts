import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCard } from '@a2a-js/sdk';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterModule } from '../cluster/module.js';
import { gateModule } from '../gate/module.js';
import { ingressModule } from '../ingress/module.js';
import { coreModule } from '../server/core-routes.js';
import { parseConfig } from '../server/config.js';
import { type RunningServer, startServer } from '../server/serve.js';
import { KEYS } from '../server/testing.js';
import { freshStore, pgAvailable, type TestStore } from '../store/testing.js';
import { agentsModule } from './module.js';
import { type Peer, peerCard, sdkPeer, waitFor } from './testing.js';

/**
 * Two gateways on one PostgreSQL schema, as two replicas are: what an agent tells one (its
 * registration, its heartbeat) routes on the other within the sync bound, a push accepted by one
 * wakes the attempt waiting on the other, and a wait-for cycle whose two halves arrive at different
 * replicas is refused (docs/agents.md, "Replicas").
 */

const PUSH_TOKEN = 'push-token-0123456789abcdef';
const SOLO_TOKEN = 'solo-token-0123456789abcdef';
const KEY = { slow: 'slow-key-0123456789abcdef', qa: 'qa-key-0123456789abcdef' };

describe.runIf(await pgAvailable())('the agent registry shared between two replicas on postgres', () => {
  let store: TestStore;
  let slow: Peer;
  let fast: Peer;
  let solo: Peer;
  const replicas: RunningServer[] = [];
  const dirs: string[] = [];

  const call = async (at: RunningServer, path: string, key: string, body?: unknown) => {
    const r = await fetch(`${at.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as unknown };
  };
  const listed = async (at: RunningServer) =>
    (await call(at, '/v1/agents', KEYS.agent)).body as { id: string; status: string; load: number }[];

  beforeAll(async () => {
    store = await freshStore('postgres');
    slow = await sdkPeer('slow', ['slowonly'], 'slow', 1_500);
    fast = await sdkPeer('fast', ['review'], 'fast');
    solo = await sdkPeer('solo', ['summarize'], 'fast');
    for (const [i, db] of [store.db, await store.reopen()].entries()) {
      const dir = mkdtempSync(join(tmpdir(), 'sb-agents-rep-'));
      dirs.push(dir);
      const config = parseConfig({
        data_dir: dir,
        server: { host: '127.0.0.1', port: 0 },
        auth: {
          keys: [
            { name: 'ops', role: 'admin', key: KEYS.admin },
            { name: 'bot', role: 'agent', key: KEYS.agent },
            ...Object.entries(KEY).map(([name, key]) => ({ name, role: 'agent', key })),
          ],
        },
        egress: { allow: ['127.0.0.1'] },
        sources: { 'agent-push': { type: 'a2a-push', token: PUSH_TOKEN } },
        // Only replica A's config names `solo`: B routes to it from the row A wrote.
        agents: {
          slow: { card_url: slow.cardUrl },
          ...(i === 0 ? { solo: { card_url: solo.cardUrl, token_env: 'SOLO_TOKEN' } } : {}),
        },
      });
      const server = await startServer(config, {
        db,
        logger: pino({ level: 'silent' }),
        env: {},
        defaultMetrics: false,
        modules: [
          coreModule(),
          clusterModule(),
          gateModule({ watch: false, sighup: false }),
          ingressModule({ workers: false }),
          agentsModule({ env: { SOLO_TOKEN } }),
        ],
      });
      server.services.config.server.public_url = server.url;
      replicas.push(server);
    }
    // A's calls give the agents B's push receiver: B accepts the push of an attempt waiting on A, and
    // the cluster broadcast wakes it there (a relay row may be claimed by either replica anyway).
    replicas[0]!.services.config.server.public_url = replicas[1]!.url;
  }, 60_000);
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await Promise.all([slow, fast, solo].map((p) => p?.close()));
    await store?.cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('an agent registered and heartbeating on replica A is up, with its load, on replica B', async () => {
    const [a, b] = replicas as [RunningServer, RunningServer];
    const card = AgentCard.toJSON(peerCard('QA', `${fast.url}/rpc`, ['review'])) as Record<string, unknown>;
    expect((await call(a, '/v1/agents', KEY.qa, { id: 'qa', card })).status).toBe(201);
    await waitFor(async () => (await listed(b)).some((x) => x.id === 'qa' && x.status === 'up'), 5_000);
    // B knows it now: its heartbeat may go to B, and A sees what B heard.
    expect((await call(b, '/v1/agents/qa/heartbeat', KEY.qa, { load: 4 })).status).toBe(200);
    await waitFor(async () => (await listed(a)).find((x) => x.id === 'qa' && x.load === 4), 5_000);
    expect((await call(a, '/v1/agents/slow/heartbeat', KEY.slow, { status: 'down' })).status).toBe(200);
    await waitFor(async () => (await listed(b)).find((x) => x.id === 'slow' && x.status === 'down'), 5_000);
    const refused = await call(b, '/v1/collaborations', KEYS.agent, { skill: 'slowonly', input: 'x' });
    expect(refused.status).toBe(503);
    expect((await call(a, '/v1/agents/slow/heartbeat', KEY.slow, { status: 'up' })).status).toBe(200);
    await waitFor(async () => (await listed(b)).find((x) => x.id === 'slow' && x.status === 'up'), 5_000);
  });

  it('routes on replica B to an agent only replica A configures, with the token its token_env names', async () => {
    const [, b] = replicas as [RunningServer, RunningServer];
    await waitFor(async () => (await listed(b)).some((x) => x.id === 'solo' && x.status === 'up'), 5_000);
    const r = await call(b, '/v1/collaborations', KEYS.agent, { skill: 'summarize', input: 'notes' });
    expect(r.body).toMatchObject({ state: 'completed', agent: 'solo' });
    expect(solo.auth.at(-1)).toBe(`Bearer ${SOLO_TOKEN}`);
  });

  it('refuses a cycle whose two halves arrive at different replicas', async () => {
    const [a, b] = replicas as [RunningServer, RunningServer];
    const calls = slow.calls;
    // qa waits on slow through replica A…
    const waiting = call(a, '/v1/collaborations', KEY.qa, {
      skill: 'slowonly',
      input: 'long',
      fallback: false,
    });
    await waitFor(() => slow.calls > calls);
    // …and slow asks qa for a review through replica B: slow → qa → slow.
    const r = await call(b, '/v1/collaborations', KEY.slow, { skill: 'review', input: 'draft' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      error: { code: 'COLLABORATION_CYCLE', details: { cycle: ['agent:slow', 'agent:qa', 'agent:slow'] } },
    });
    // Completed well inside its 15 s timeout: the push reached A through B.
    expect((await waiting).body).toMatchObject({ state: 'completed', agent: 'slow' });
    // The wait row went with the receipt: the same request through B is fine now.
    const again = await call(b, '/v1/collaborations', KEY.slow, { skill: 'review', input: 'draft' });
    expect(again.body).toMatchObject({ state: 'completed', agent: 'qa' });
  }, 30_000);
});
