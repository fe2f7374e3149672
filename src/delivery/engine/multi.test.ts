import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../../store/testing.js';
import { EventLog } from '../../log/log.js';
import type { Db } from '../../store/port.js';
import { deliveryConfigSchema, deliveryPolicies } from '../config.js';
import { testEgress } from '../../egress/testing.js';
import { FAST, message, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../testing.js';
import { type ChannelEntry, DeliveryEngine } from './engine.js';
import { createDeliveryService } from './service.js';
import type { DeliveryRow } from './sql.js';

// Two SQLite connections in one process would block each other's event loop inside busy_timeout
// (better-sqlite3 is synchronous); several SQLite processes are covered by the crash test.
const PG = (await dialects()).filter((d) => d === 'postgres');
const DEFAULTS = { tenant_id: 'default', environment: 'test' };

/** Two engines, each on its own connection to one store: two relay processes in all but the pid. */
describe.skipIf(PG.length === 0).each(PG)('two delivery engines sharing one store on %s', (dialect) => {
  let store: TestStore;
  let second: Db | undefined;
  let rx: ScriptedReceiver;
  const engines: DeliveryEngine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.stop();
    await second?.close();
    await store?.cleanup();
    await rx?.close();
  });

  function engine(db: Db, channels: Record<string, ChannelEntry>, delivery: Record<string, unknown> = {}) {
    const e = new DeliveryEngine({
      db,
      log: new EventLog(db, DEFAULTS),
      channels: () => channels,
      policies: deliveryPolicies(deliveryConfigSchema.parse({ ...FAST, ...delivery })),
      egress: testEgress(['127.0.0.1']),
      secret: (name) => (name === 'HOOK_SECRET' ? SECRET : undefined),
      now: Date.now,
      batchSize: 16,
      loops: 2,
      pollMs: 10,
      logger: pino({ level: process.env.DBG ? 'debug' : 'silent' }),
    });
    engines.push(e);
    return e;
  }

  async function enqueue(db: Db, channels: Record<string, ChannelEntry>, n: number): Promise<void> {
    const log = new EventLog(db, DEFAULTS);
    const svc = createDeliveryService({
      db,
      log,
      channels: () => channels,
      now: Date.now,
      endpointPolicy: deliveryPolicies(deliveryConfigSchema.parse({})),
    });
    for (let i = 0; i < n; i += 50) {
      await db.tx(async (tx) => {
        for (let j = i; j < Math.min(n, i + 50); j++) {
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

  const statuses = async (db: Db) =>
    (await db.query<Pick<DeliveryRow, 'status'>>({ text: 'SELECT status FROM deliveries' })).map(
      (r) => r.status,
    );

  it('delivers each of 300 deliveries exactly once between them', async () => {
    store = await freshStore(dialect);
    second = await store.reopen();
    rx = await startScriptedReceiver({ secret: SECRET });
    const channels = { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } };
    await enqueue(store.db, channels, 300);
    // A generous timeout: a slow attempt on a loaded machine must not turn into a legitimate resend.
    const a = engine(store.db, channels, { timeout_ms: 10_000 });
    const b = engine(second, channels, { timeout_ms: 10_000 });
    a.start();
    b.start();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const s = await statuses(store.db);
      if (s.every((x) => x === 'succeeded')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const all = (
      await store.db.query<{ status: string; last_error: string | null; next_attempt_at: number }>({
        text: 'SELECT status, last_error, next_attempt_at FROM deliveries',
      })
    ).map((r) => `${r.status}:${r.last_error}:${r.next_attempt_at - Date.now()}`);
    expect(
      all.filter((s) => s.startsWith('succeeded')),
      JSON.stringify(all.filter((s) => !s.startsWith('succeeded')).slice(0, 5)),
    ).toHaveLength(300);
    expect(rx.byId.size).toBe(300);
    expect([...rx.byId.values()].every((n) => n === 1)).toBe(true);
    expect(rx.badSignatures).toBe(0);
  }, 60_000);

  it('shares the breaker: once one engine opens it, the other does not send', async () => {
    store = await freshStore(dialect);
    second = await store.reopen();
    rx = await startScriptedReceiver({ secret: SECRET });
    rx.script = () => ({ kind: 'answer', status: 503 });
    const channels = { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } };
    const config = {
      retry_schedule_ms: [0, 600_000],
      breaker: { min_attempts: 4, failure_ratio: 0.5, cool_down_ms: 600_000 },
    };
    const a = engine(store.db, channels, config);
    const b = engine(second, channels, config);
    await enqueue(store.db, channels, 4);
    await a.runOnce();
    expect(rx.hits).toHaveLength(4);
    await enqueue(second, channels, 1);
    await b.runOnce();
    expect(rx.hits).toHaveLength(4);
    const rows = await second.query<DeliveryRow>({
      text: "SELECT * FROM deliveries WHERE attempts = 0 AND last_error = 'circuit open'",
    });
    expect(rows).toHaveLength(1);
  }, 30_000);
});
