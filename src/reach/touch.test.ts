import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReachApp, reachApp, ticketsSqlite } from './testing.js';

const TICKET_QUERY = {
  kind: 'sql',
  description: 'Look up tickets by status',
  input_schema: {
    type: 'object',
    required: ['status'],
    properties: {
      status: { enum: ['open', 'pending', 'closed'] },
      limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
      tags: { type: 'array', items: { type: 'string' } },
    },
  },
  sql: {
    database_env: 'TICKETS_DB_URL',
    query: 'SELECT id, title, status, reporter_phone, note FROM tickets WHERE status = :status LIMIT :limit',
  },
  timeout: 'query',
  permission: 'read',
  context: { mode: 'head_tail', keep: 5 },
  redact: ['cn_mobile', 'cn_id_card', 'bank_card', 'email'],
};

describe('the touch protocol over HTTP', () => {
  let db: ReturnType<typeof ticketsSqlite>;
  let r: ReachApp;
  beforeAll(async () => {
    db = ticketsSqlite();
    r = await reachApp({
      config: {
        tools: {
          'ticket.query': TICKET_QUERY,
          'ticket.all': {
            ...TICKET_QUERY,
            input_schema: { type: 'object', properties: {} },
            sql: {
              database_env: 'TICKETS_DB_URL',
              query: 'SELECT id, title, status, reporter_phone, note FROM tickets',
            },
          },
        },
      },
      env: { TICKETS_DB_URL: `sqlite:${db.path}` },
    });
  });
  afterAll(async () => {
    await r.cleanup();
    db.cleanup();
  });

  it('lists the registry with schemas, channel, timeout and permission', async () => {
    const { status, body } = await r.get('/v1/tools');
    expect(status).toBe(200);
    const tools = body.tools as {
      name: string;
      timeout_ms: number;
      permission: string;
      input_schema: Record<string, unknown>;
    }[];
    const t = tools.find((x) => x.name === 'ticket.query')!;
    expect(t).toMatchObject({ timeout_ms: 8000, permission: 'read', channel: 'sync' });
    expect(t.input_schema.additionalProperties).toBe(false);
    expect(tools.map((x) => x.name)).toEqual(
      expect.arrayContaining(['memory_read', 'memory_search', 'memory_write']),
    );
  });

  it('answers rows from the real SQLite file, 400 rows cut to head and tail with a marker', async () => {
    const { status, body } = await r.touch({ tool_name: 'ticket.all', params: {} });
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    const data = body.data as { total: number; omitted: number; head: unknown[]; tail: { id: number }[] };
    expect(data.total).toBe(400);
    expect(data.omitted).toBe(390);
    expect(data.head).toHaveLength(5);
    expect(data.tail.at(-1)!.id).toBe(400);
    expect(body.text).toContain('… 390 of 400 items left out …');
    const ctx = body.context as { tokens_before: number; tokens_after: number };
    expect(ctx.tokens_after).toBeLessThan(ctx.tokens_before * 0.2);
  });

  it('names every failing path when params have wrong types and unknown fields', async () => {
    const { status, body } = await r.touch({
      tool_name: 'ticket.query',
      params: { status: 'opne', limit: '50', tags: 'urgent', colour: 'red' },
    });
    expect(status).toBe(400);
    const e = body.error as {
      code: string;
      message: string;
      details: { problems: { path: string; message: string }[] };
    };
    expect(e.code).toBe('INVALID_PARAMS');
    const paths = e.details.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining(['params.status', 'params.limit', 'params.tags', 'params.colour']),
    );
    expect(e.message).toContain('params.tags must be an array; you sent a string ("urgent")');
    expect(e.message).toContain('params.colour is not a parameter of this tool; remove it');
  });

  it('suggests the nearest name for a typo', async () => {
    const { status, body } = await r.touch({ tool_name: 'ticket.qeury', params: {} });
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'TOOL_NOT_FOUND', details: { did_you_mean: ['ticket.query'] } });
    expect((body.error as { message: string }).message).toContain('did you mean ticket.query');
  });
});
