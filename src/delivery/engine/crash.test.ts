import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, PG_URL, type TestStore } from '../../store/testing.js';
import { ROOT, requireBuild } from '../../cli/testing.js';
import { EventLog } from '../../log/log.js';
import type { Db } from '../../store/port.js';
import { deliveryConfigSchema, deliveryPolicies } from '../config.js';
import { message, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../testing.js';
import { createDeliveryService } from './service.js';

/**
 * A real child process runs the compiled engine (`npm run build` first) during a burst of 300 signed
 * webhook deliveries and is SIGKILLed midway; a second child finishes. Every delivery must reach the
 * receiver at least once, and the receiver, de-duplicating by `webhook-id`, sees each exactly once.
 */

const DIALECTS = await dialects();
const TOTAL = 300;

function startChild(store: TestStore, receiver: string): ChildProcess {
  requireBuild();
  const target = store.dialect === 'sqlite' ? store.location : PG_URL;
  const schema = store.dialect === 'postgres' ? store.location : '-';
  return spawn(process.execPath, [`${ROOT}test/fixtures/delivery-engine.mjs`, target, schema, receiver], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOOK_SECRET: SECRET },
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

async function enqueueBurst(db: Db): Promise<void> {
  const log = new EventLog(db, { tenant_id: 'default', environment: 'test' });
  const channels = { hook: { type: 'webhook' } };
  const svc = createDeliveryService({
    db,
    log,
    channels: () => channels,
    now: Date.now,
    endpointPolicy: deliveryPolicies(deliveryConfigSchema.parse({})),
  });
  for (let i = 0; i < TOTAL; i += 100) {
    await db.tx(async (tx) => {
      for (let j = i; j < i + 100; j++) {
        const cause = await log.append({ type: 'agent.progress.reported' }, tx);
        await svc.enqueue(tx, {
          eventId: cause.event_id,
          destination: 'hook',
          message: message(cause.event_id),
        });
      }
    });
  }
}

describe.each(DIALECTS)('a delivery process killed mid-burst on %s', (dialect) => {
  let store: TestStore;
  let rx: ScriptedReceiver;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await rx?.close();
    await store?.cleanup();
  });

  it('delivers every webhook at least once and each exactly once after de-duplication', async () => {
    store = await freshStore(dialect);
    rx = await startScriptedReceiver({ secret: SECRET });
    await enqueueBurst(store.db);
    // A receiver that takes a moment per request, so the kill lands with requests in flight.
    const seen = new Set<string>();
    let processed = 0;
    const killAt = 80 + Math.floor(Math.random() * 80);
    const first = startChild(store, rx.url);
    children.push(first);
    const killed = new Promise<void>((resolve) => {
      rx.onHit = (hit) => {
        const id = hit.headers['webhook-id'] ?? '';
        if (!seen.has(id)) {
          seen.add(id);
          processed += 1;
        }
        if (rx.hits.length >= killAt && first.exitCode === null && first.signalCode === null) {
          first.kill('SIGKILL');
          resolve();
        }
      };
    });
    await killed;
    await exited(first);
    const hitsAtKill = rx.hits.length;
    expect(hitsAtKill).toBeLessThan(TOTAL);

    const second = startChild(store, rx.url);
    children.push(second);
    const deadline = Date.now() + 60_000;
    let done = 0;
    while (Date.now() < deadline) {
      const rows = await store.db.query<{ n: number }>({
        text: "SELECT COUNT(*) AS n FROM deliveries WHERE status = 'succeeded'",
      });
      done = Number(rows[0]?.n);
      if (done === TOTAL) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    second.kill('SIGTERM');
    await exited(second);

    expect(done).toBe(TOTAL);
    expect(rx.badSignatures).toBe(0);
    expect(rx.byId.size).toBe(TOTAL); // every delivery reached the receiver at least once
    expect(seen.size).toBe(TOTAL);
    expect(processed).toBe(TOTAL); // de-duplicated by webhook-id: each exactly once
    const events = await store.db.query<{ n: number }>({
      text: "SELECT COUNT(*) AS n FROM events WHERE type = 'integration.delivery.succeeded'",
    });
    expect(Number(events[0]?.n)).toBe(TOTAL);
  }, 120_000);
});
