import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/log/verify.js';
import { appMigrations } from '../../src/server/modules.js';
import { migrate } from '../../src/store/migrate.js';
import { SqliteDb } from '../../src/store/sqlite.js';
import { ROOT, requireBuild } from '../../src/cli/testing.js';

/** Runs the fixture to its end; fails if it is still running after `ms` (a hang). */
function run(path: string, mode: 'default' | 'quiet', ms = 15_000) {
  const child = spawn(process.execPath, [`${ROOT}test/fixtures/writer-dies.mjs`, path, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the process did not exit within ${ms} ms: ${stdout}${stderr}`));
    }, ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The crash test's appender, on the writer thread, SIGKILLed once it has written `after` batches. */
async function appendThenKill(path: string, after: number): Promise<void> {
  const child = spawn(process.execPath, [`${ROOT}test/fixtures/append-forever.mjs`, path], {
    env: { ...process.env, SQLITE_WRITER: 'thread' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (Number(d.toString().trim().split('\n').at(-1)) >= after)
        setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 15));
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`appender exited ${code}: ${stderr}`)),
    );
  });
}

describe('a process whose SQLite writer thread dies', () => {
  const dirs: string[] = [];
  beforeAll(requireBuild);
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-writer-death-'));
    dirs.push(dir);
    return join(dir, 'switchboard.db');
  };

  it('goes down with a store error, and the next start-up has every committed event', async () => {
    const path = fresh();
    const out = await run(path, 'default');
    // The transaction in flight is never answered: the process is gone before it ends.
    expect(out.code).toBe(1);
    expect(out.stdout).not.toContain('committed');
    expect(out.stderr).toMatch(/writer thread stopped/);
    const db = new SqliteDb({ path });
    try {
      expect(await verifyChain(db)).toMatchObject({ ok: true, count: 20 });
      expect(await db.query({ text: "SELECT 1 FROM inbox WHERE event_id = 'lost'" })).toEqual([]);
    } finally {
      await db.close();
    }
  }, 30_000);

  it('SIGKILLed mid-append leaves every event with its outbox row and an intact chain', async () => {
    const path = fresh();
    const empty = new SqliteDb({ path });
    await migrate(empty, appMigrations());
    await empty.close();
    for (let round = 0; round < 2; round++) await appendThenKill(path, 25 * (round + 1));
    const db = new SqliteDb({ path });
    try {
      const n = async (text: string) => Number((await db.query<{ n: number }>({ text }))[0]!.n);
      const total = await n('SELECT COUNT(*) AS n FROM events');
      expect(total).toBeGreaterThanOrEqual(100);
      expect(total % 2).toBe(0); // batches of two are all-or-nothing
      expect(
        await n(
          'SELECT COUNT(*) AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = e.event_id)',
        ),
      ).toBe(0);
      expect(await verifyChain(db)).toMatchObject({ ok: true, count: total });
    } finally {
      await db.close();
    }
  }, 60_000);

  it('ends on its own when the death is handled, with nothing left holding it open', async () => {
    const out = await run(fresh(), 'quiet');
    expect(out.stdout).toContain('rejected: store_unavailable');
    expect(out.code).toBe(0);
  }, 30_000);
});
