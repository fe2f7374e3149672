import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/log/verify.js';
import { dialects, freshStore, PG_URL, type TestStore } from '../../src/store/testing.js';
import { ROOT, requireBuild } from '../../src/cli/testing.js';

const DIALECTS = await dialects();

/** Starts the appender child and SIGKILLs it once it has written `after` batches. */
async function appendThenKill(target: string, schema: string | undefined, after: number): Promise<void> {
  requireBuild();
  const child = spawn(
    process.execPath,
    [`${ROOT}test/fixtures/append-forever.mjs`, target, ...(schema ? [schema] : [])],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      const last = Number(d.toString().trim().split('\n').at(-1));
      if (last >= after) {
        // A random extra delay so the kill lands at an arbitrary point of a transaction.
        setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 15));
      }
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`appender exited ${code}: ${stderr}`)),
    );
  });
}

describe.each(DIALECTS)('a process killed mid-append on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  it('leaves every event with its outbox row and an intact chain', async () => {
    store = await freshStore(dialect);
    await store.db.close();
    for (let round = 0; round < 2; round++) {
      await appendThenKill(
        dialect === 'sqlite' ? store.location : PG_URL,
        dialect === 'postgres' ? store.location : undefined,
        25 * (round + 1),
      );
    }
    const db = await store.reopen();
    store.db = db;
    const orphanEvents = await db.query<{ n: number }>({
      text: 'SELECT COUNT(*) AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = e.event_id)',
    });
    const orphanRows = await db.query<{ n: number }>({
      text: 'SELECT COUNT(*) AS n FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = o.event_id)',
    });
    const total = await db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM events' });
    expect(Number(total[0]!.n)).toBeGreaterThanOrEqual(100);
    expect(Number(total[0]!.n) % 2).toBe(0); // batches of two are all-or-nothing
    expect(Number(orphanEvents[0]!.n)).toBe(0);
    expect(Number(orphanRows[0]!.n)).toBe(0);
    expect(await verifyChain(db)).toMatchObject({ ok: true });
  }, 60_000);
});
