import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterModule } from '../cluster/module.js';
import { gateModule } from '../gate/module.js';
import { ingressModule } from '../ingress/module.js';
import { coreModule } from '../server/core-routes.js';
import { parseConfig } from '../server/config.js';
import { type RunningServer, startServer } from '../server/serve.js';
import { KEYS } from '../server/testing.js';
import type { Db } from '../store/port.js';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { agentsModule } from './module.js';
import type { Receipt } from './port.js';
import { type Peer, sdkPeer, waitFor } from './testing.js';

/**
 * A gateway that stops mid-collaboration (recover.ts): the gateway that starts next on the same store
 * (SQLite: the restart; PostgreSQL: a replica whose cluster does not know the first one as alive)
 * finds the open attempt, ends the receipt `timed_out` with `INTERRUPTED`, records the end on the
 * collaboration's correlation and cancels the remote task through egress.
 */

const PUSH_TOKEN = 'push-token-0123456789abcdef';

describe.each(await dialects())('a gateway that stopped mid-collaboration, on %s', (dialect) => {
  let store: TestStore;
  let slow: Peer;
  const servers: RunningServer[] = [];
  const dirs: string[] = [];

  const start = async (db: Db, withCluster: boolean) => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-agents-rec-'));
    dirs.push(dir);
    const server = await startServer(
      parseConfig({
        data_dir: dir,
        server: { host: '127.0.0.1', port: 0 },
        auth: {
          keys: [
            { name: 'ops', role: 'admin', key: KEYS.admin },
            { name: 'bot', role: 'agent', key: KEYS.agent },
          ],
        },
        egress: { allow: ['127.0.0.1'] },
        sources: { 'agent-push': { type: 'a2a-push', token: PUSH_TOKEN } },
        agents: { slow: { card_url: slow.cardUrl } },
      }),
      {
        db,
        logger: pino({ level: 'silent' }),
        env: {},
        defaultMetrics: false,
        modules: [
          coreModule(),
          ...(withCluster ? [clusterModule()] : []),
          gateModule({ watch: false, sighup: false }),
          ingressModule({ workers: false }),
          agentsModule({ env: {} }),
        ],
      },
    );
    server.services.config.server.public_url = server.url;
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    store = await freshStore(dialect);
    slow = await sdkPeer('slow', ['slowonly'], 'slow', 60_000);
  }, 30_000);
  afterAll(async () => {
    for (const s of servers) await s.stop().catch(() => {});
    await slow?.close();
    await store?.cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('times the open attempt out, cancels the remote task and settles the receipt', async () => {
    const first = await start(store.db, false);
    const asked = fetch(`${first.url}/v1/collaborations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.agent}`, 'content-type': 'application/json' },
      body: JSON.stringify({ skill: 'slowonly', input: 'the long job', timeout_ms: 120_000 }),
    }).then(
      (r) => r.json(),
      () => undefined,
    );
    // The attempt's row names the remote task once SendMessage answered with it still running.
    const waiting = async () =>
      (
        await store.db.query<{ ref_id: string; task_id: string | null }>({
          text: 'SELECT ref_id, task_id FROM agent_waits',
          values: [],
        })
      )[0];
    const open = await waitFor(async () => {
      const row = await waiting();
      return row?.task_id ? row : undefined;
    }, 10_000);
    const { ref_id: refId, task_id: taskId } = open!;
    const cancels = slow.cancels;

    // The next gateway on this store: the first one's attempt has no process watching it there.
    const next = await start(await store.reopen(), dialect === 'postgres');
    await waitFor(() => slow.cancels > cancels, 10_000);
    const r = await fetch(`${next.url}/v1/collaborations/${refId}`, {
      headers: { authorization: `Bearer ${KEYS.admin}` },
    });
    const receipt = (await r.json()) as Receipt;
    expect(receipt).toMatchObject({
      ref_id: refId,
      state: 'timed_out',
      agent: 'slow',
      error: { code: 'INTERRUPTED' },
      attempts: [{ agent: 'slow', state: 'timed_out', task_id: taskId }],
    });
    expect(receipt.finished_at).not.toBeNull();
    const ended = await next.services.log.list({ type: 'agent.collaboration.failed', limit: 50 });
    const mine = ended.find((e) => e.envelope.redacted_summary.ref_id === refId);
    expect(mine?.envelope.redacted_summary).toMatchObject({ state: 'timed_out', error_code: 'INTERRUPTED' });
    const requested = (
      await next.services.log.list({ type: 'agent.collaboration.requested', limit: 50 })
    ).find((e) => e.envelope.redacted_summary.ref_id === refId);
    expect(mine?.envelope.correlation_id).toBe(requested?.envelope.correlation_id);
    expect(mine?.envelope.causation_id).toBe(requested?.envelope.event_id);
    expect(await waiting()).toBeUndefined();

    // The first gateway's own end (its task was cancelled) leaves the settled receipt as it is.
    await asked;
    const after = await fetch(`${next.url}/v1/collaborations/${refId}`, {
      headers: { authorization: `Bearer ${KEYS.admin}` },
    });
    expect(((await after.json()) as Receipt).state).toBe('timed_out');
  }, 60_000);
});
