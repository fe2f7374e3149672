import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { reachPort } from './port.js';
import { type ReachApp, reachApp, ticketsSqlite } from './testing.js';

const DIALECTS = await dialects();

const TICKETS = {
  kind: 'sql',
  description: 'Tickets by status',
  input_schema: {
    type: 'object',
    required: ['status'],
    properties: { status: { enum: ['open', 'pending', 'closed'] } },
  },
  sql: {
    database_env: 'TICKETS_DB_URL',
    query: 'SELECT id, title FROM tickets WHERE status = :status LIMIT 3',
  },
  permission: 'read',
};

describe.each(DIALECTS)('reach: recent touches on %s (the console Tools page)', (dialect) => {
  let r: ReachApp | undefined;
  let db: ReturnType<typeof ticketsSqlite> | undefined;
  afterEach(async () => {
    await r?.cleanup();
    db?.cleanup();
  });

  it('lists every caller’s touches newest first, one tool or all, without params or results', async () => {
    db = ticketsSqlite();
    r = await reachApp({
      dialect,
      config: { tools: { 'ticket.query': TICKETS, 'ticket.other': TICKETS } },
      env: { TICKETS_DB_URL: `sqlite:${db.path}` },
    });
    const touch = (tool: string, status: string, id: string) =>
      r!.touch({ tool_name: tool, params: { status }, request_id: id });
    expect((await touch('ticket.query', 'open', 'req-1')).body.ok).toBe(true);
    expect((await touch('ticket.other', 'closed', 'req-2')).body.ok).toBe(true);
    // Refused before it runs (bad params): no row, so not listed.
    expect((await touch('ticket.query', 'nonsense', 'req-3')).body.ok).toBe(false);
    const port = r.t.port(reachPort);
    const all = await port.recent!({ limit: 10 });
    expect(all.map((t) => t.request_id)).toEqual(['req-2', 'req-1']);
    expect(all[1]).toMatchObject({ tool: 'ticket.query', caller: 'bot', status: 'done', channel: 'sync' });
    expect(all[1]!.error_code).toBeNull();
    expect(Date.parse(all[1]!.created_at)).toBeGreaterThan(0);
    expect(JSON.stringify(all)).not.toMatch(/Ticket|open|closed/);
    expect((await port.recent!({ limit: 10, tool: 'ticket.other' })).map((t) => t.request_id)).toEqual([
      'req-2',
    ]);
    expect(await port.recent!({ limit: 1 })).toHaveLength(1);
  });
});
