import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAvailable } from '../store/testing.js';
import { type ReachApp, reachApp, ticketsPostgres, ticketsSqlite } from './testing.js';

/**
 * `sql` tools against real databases: a SQLite file and a schema of our own on the test PostgreSQL,
 * each holding the seed's 400 tickets. The same cases run on both.
 */

const status = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { enum: ['open', 'pending', 'closed'] },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
};

function tools(slow: string) {
  return {
    'ticket.query': {
      kind: 'sql',
      input_schema: status,
      sql: {
        database_env: 'TICKETS_DB_URL',
        query:
          'SELECT id, title, status, reporter_phone FROM tickets WHERE status = :status ORDER BY id LIMIT :limit',
      },
      context: { mode: 'head_tail', keep: 5 },
      redact: ['cn_mobile', 'cn_id_card', 'bank_card', 'email'],
    },
    'ticket.sneaky_delete': {
      kind: 'sql',
      input_schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
      sql: { database_env: 'TICKETS_DB_URL', query: 'DELETE FROM tickets WHERE id = :id' },
    },
    'ticket.close': {
      kind: 'sql',
      permission: 'write',
      input_schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
      sql: { database_env: 'TICKETS_DB_URL', query: "UPDATE tickets SET status = 'closed' WHERE id = :id" },
    },
    'ticket.slow': {
      kind: 'sql',
      timeout_ms: 300,
      input_schema: { type: 'object', properties: {} },
      sql: { database_env: 'TICKETS_DB_URL', query: slow },
    },
    'ticket.typo': {
      kind: 'sql',
      input_schema: { type: 'object', properties: {} },
      sql: { database_env: 'TICKETS_DB_URL', query: 'SELECT titel FROM tickets' },
    },
  };
}

const SQLITE_SLOW =
  'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000000000) SELECT count(*) AS n FROM c';
const PG_SLOW = 'SELECT pg_sleep(5) AS slept';

const targets: {
  name: string;
  setup(): Promise<{ url: string; slow: string; cleanup(): Promise<void> | void }>;
}[] = [
  {
    name: 'SQLite',
    async setup() {
      const db = ticketsSqlite();
      return { url: `sqlite:${db.path}`, slow: SQLITE_SLOW, cleanup: db.cleanup };
    },
  },
  {
    name: 'PostgreSQL',
    async setup() {
      const db = await ticketsPostgres();
      return { url: db.url, slow: PG_SLOW, cleanup: db.cleanup };
    },
  },
];

for (const target of targets) {
  describe.runIf(target.name === 'SQLite' || (await pgAvailable()))(`sql tools on ${target.name}`, () => {
    let r: ReachApp;
    let db: Awaited<ReturnType<(typeof target)['setup']>>;
    beforeAll(async () => {
      db = await target.setup();
      r = await reachApp({ config: { tools: tools(db.slow) }, env: { TICKETS_DB_URL: db.url } });
    });
    afterAll(async () => {
      await r.cleanup();
      await db.cleanup();
    });

    it('binds named parameters and applies schema defaults', async () => {
      const { status: code, body } = await r.touch({
        tool_name: 'ticket.query',
        params: { status: 'open', limit: 3 },
      });
      expect(code).toBe(200);
      expect(body.data).toHaveLength(3);
      expect((body.data as { status: string }[]).every((t) => t.status === 'open')).toBe(true);
      const dflt = await r.touch({ tool_name: 'ticket.query', params: { status: 'pending' } });
      const d = dflt.body.data as { total: number; omitted: number };
      expect(d.total).toBe(50);
      expect(d.omitted).toBe(40);
    });

    it('never lets a read tool write, even when its own query is a write', async () => {
      const { status: code, body } = await r.touch({ tool_name: 'ticket.sneaky_delete', params: { id: 1 } });
      expect(code).toBe(502);
      expect(body.error).toMatchObject({
        code: 'TOOL_FAILED',
        message: 'this tool is read-only and its query tried to write',
      });
      const still = await r.touch({ tool_name: 'ticket.query', params: { status: 'open', limit: 1 } });
      expect((still.body.data as { id: number }[])[0]!.id).toBe(1);
    });

    it('lets a write tool write, in its own transaction', async () => {
      const { body } = await r.touch({ tool_name: 'ticket.close', params: { id: 4 } });
      expect(body).toMatchObject({ ok: true, data: { changes: 1 } });
    });

    it('stops a slow query at the deadline and answers TIMEOUT', async () => {
      const t0 = Date.now();
      const { status: code, body } = await r.touch({ tool_name: 'ticket.slow', params: {} });
      expect(code).toBe(504);
      expect(body.error).toMatchObject({ code: 'TIMEOUT', details: { timeout_ms: 300 } });
      expect(Date.now() - t0).toBeLessThan(3000);
      // The database is usable at once: the worker or the connection was replaced, not left hung.
      const next = await r.touch({ tool_name: 'ticket.query', params: { status: 'open', limit: 1 } });
      expect(next.body.ok).toBe(true);
    });

    it('reports a broken query as TOOL_FAILED with the database message', async () => {
      const { body } = await r.touch({ tool_name: 'ticket.typo', params: {} });
      expect(body.error).toMatchObject({ code: 'TOOL_FAILED' });
      expect(JSON.stringify(body.error)).toContain('titel');
    });
  });
}
