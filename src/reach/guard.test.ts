import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../envelope/index.js';
import { auth } from '../server/testing.js';
import type { InProcessTool } from './inprocess.js';
import * as q from './sql.js';
import { type ReachApp, reachApp, ticketsSqlite } from './testing.js';

/** The guard around every touch: the gate, approvals, concurrency, the task cap, idempotency, the log. */

const open = { type: 'object', properties: { n: { type: 'integer' }, phone: { type: 'string' } } };

let release: () => void = () => {};
let held = new Promise<void>((r) => {
  release = r;
});
let runs = 0;
/** `read.latch` holds every call until `unlatch()`; `inside` counts the calls in its backend now. */
let unlatch: () => void = () => {};
let latch = Promise.resolve();
let inside = 0;
const arm = () => {
  latch = new Promise<void>((r) => {
    unlatch = r;
  });
};

const inProcess: InProcessTool[] = [
  {
    name: 'slow.hold',
    schema: open,
    async run() {
      await held;
      return { done: true };
    },
  },
  {
    name: 'read.latch',
    schema: open,
    async run() {
      inside++;
      await latch;
      inside--;
      return { latched: true };
    },
  },
  {
    name: 'count.up',
    schema: open,
    run(params) {
      runs++;
      return { runs, n: params.n ?? null };
    },
  },
  {
    name: 'phone.book',
    schema: open,
    redact: ['cn_mobile', 'cn_id_card'],
    run: () => [{ name: 'Zhang Wei', phone: '13800138000', id_card: '11010519491231002X' }],
  },
  { name: 'bad.date', schema: open, run: () => ({ at: new Date() }) },
  {
    name: 'ops.purge',
    schema: open,
    permission: 'admin',
    run: () => ({ purged: 3 }),
  },
];

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let v = await fn();
  for (let i = 0; i < 200 && !ok(v); i++) {
    await sleep(15);
    v = await fn();
  }
  return v;
}

describe('the guard', () => {
  let db: ReturnType<typeof ticketsSqlite>;
  let r: ReachApp;
  beforeAll(async () => {
    db = ticketsSqlite();
    r = await reachApp({
      tools: inProcess,
      env: { TICKETS_DB_URL: db.path },
      config: {
        reach: { touch_cap_per_task: 3 },
        tools: {
          'ticket.close': {
            kind: 'sql',
            permission: 'write',
            channel: 'sync',
            input_schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
            sql: {
              database_env: 'TICKETS_DB_URL',
              query: "UPDATE tickets SET status = 'closed' WHERE id = :id",
            },
          },
          'ticket.reopen': {
            kind: 'sql',
            permission: 'write',
            channel: 'async',
            input_schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
            sql: {
              database_env: 'TICKETS_DB_URL',
              query: "UPDATE tickets SET status = 'open' WHERE id = :id",
            },
          },
        },
        rules: [
          {
            id: 'no-count-13',
            when: 'tool == "count.up" && has(input.n) && input.n == 13',
            decision: 'deny',
            reason_code: 'UNLUCKY',
          },
          {
            id: 'writes-need-a-person',
            when: 'action == "reach.sql" && resource == "reach:write"',
            decision: 'require_approval',
            reason_code: 'WRITE_NEEDS_APPROVAL',
          },
        ],
      },
    });
  });
  afterAll(async () => {
    release();
    await r.cleanup();
    db.cleanup();
  });

  it('refuses the sixth concurrent call at once, while five run', async () => {
    const calls = Array.from({ length: 6 }, () => r.touch({ tool_name: 'slow.hold', params: {} }));
    await sleep(100);
    release();
    const answers = await Promise.all(calls);
    const refused = answers.filter(
      (a) => (a.body.error as { code?: string } | undefined)?.code === 'CONCURRENCY_LIMIT',
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]!.status).toBe(429);
    expect(answers.filter((a) => a.body.ok === true)).toHaveLength(5);
    held = Promise.resolve();
  });

  it('applies a gate rule that denies one call, with its reason code', async () => {
    const ok = await r.touch({ tool_name: 'count.up', params: { n: 12 } });
    expect(ok.body.ok).toBe(true);
    const { status, body } = await r.touch({ tool_name: 'count.up', params: { n: 13 } });
    expect(status).toBe(403);
    expect(body.error).toMatchObject({
      code: 'DENIED',
      details: { reason_code: 'UNLUCKY', matched_rules: ['no-count-13'] },
    });
  });

  it('holds a write tool for approval and runs it when the same request id comes back approved', async () => {
    const request_id = `close-${randomBytes(4).toString('hex')}`;
    const first = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 7 } });
    expect(first.status).toBe(202);
    const e = first.body.error as { code: string; details: { approval_id: string; reason_code: string } };
    expect(e).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { reason_code: 'WRITE_NEEDS_APPROVAL' } });
    const pending = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 7 } });
    expect(pending.body.error).toMatchObject({
      code: 'APPROVAL_REQUIRED',
      details: { approval_id: e.details.approval_id },
    });

    const decided = await r.t.app.request(`/v1/approvals/${e.details.approval_id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    const done = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 7 } });
    expect(done.body).toMatchObject({ ok: true, data: { changes: 1 } });
    // Once done, the same request id answers the stored result; it does not run again.
    const again = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 7 } });
    expect(again.body).toMatchObject({ ok: true, status: 'done', data: { changes: 1 } });
    // The same id for other params is refused.
    const other = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 8 } });
    expect(other.body.error).toMatchObject({
      code: 'INVALID_PARAMS',
      details: { problems: [{ path: 'request_id' }] },
    });
  });

  it('refuses an approved write whose agent was frozen after the approval, and runs a new one after the unfreeze', async () => {
    const admin = (path: string, body: unknown) =>
      r.t.app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth('admin') },
        body: JSON.stringify(body),
      });
    const approve = async (request_id: string) => {
      const first = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 9 } });
      const id = (first.body.error as { details: { approval_id: string } }).details.approval_id;
      const decided = await r.t.app.request(`/v1/approvals/${id}/decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth('approver') },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(decided.status).toBe(200);
    };
    const request_id = `frozen-${randomBytes(4).toString('hex')}`;
    await approve(request_id);
    // The approval's capability was minted before the freeze (a breaker's trip freezes the same way).
    expect((await admin('/v1/incidents/freeze', { agent: 'bot', reason: 'breaker drill' })).status).toBe(200);
    const refused = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 9 } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'DENIED',
      details: { reason_code: 'FROZEN_READ_ONLY' },
    });
    expect((refused.body.error as { message: string }).message).toContain('(breaker drill)');

    expect((await admin('/v1/incidents/unfreeze', { agent: 'bot' })).status).toBe(200);
    const again = `thawed-${randomBytes(4).toString('hex')}`;
    await approve(again);
    const done = await r.touch({ request_id: again, tool_name: 'ticket.close', params: { id: 9 } });
    expect(done.body).toMatchObject({ ok: true, data: { changes: 1 } });
  });

  it('refuses an approved-then-rejected write', async () => {
    const request_id = `close-${randomBytes(4).toString('hex')}`;
    const first = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 9 } });
    const id = (first.body.error as { details: { approval_id: string } }).details.approval_id;
    await r.t.app.request(`/v1/approvals/${id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ decision: 'reject', comment: 'not today' }),
    });
    const { status, body } = await r.touch({ request_id, tool_name: 'ticket.close', params: { id: 9 } });
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: 'DENIED', details: { reason_code: 'APPROVAL_REJECTED' } });
    expect((body.error as { message: string }).message).toContain('not today');
  });

  it('waits for the approval in the background on the async channel, then runs', async () => {
    const accepted = await r.touch({ tool_name: 'ticket.reopen', params: { id: 7 } });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ ok: true, status: 'awaiting_approval' });
    const approvalId = (accepted.body.data as { approval_id: string }).approval_id;
    const id = String(accepted.body.request_id);
    expect((await r.get(`/v1/touch/${id}`)).body.status).toBe('awaiting_approval');
    await r.t.app.request(`/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ decision: 'approve' }),
    });
    const done = await waitFor(
      () => r.get(`/v1/touch/${id}`),
      (g) => g.body.status === 'done' || g.body.status === 'failed',
    );
    expect(done.body).toMatchObject({ ok: true, status: 'done', data: { changes: 1 } });
  });

  it('stops a task at its touch cap', async () => {
    const task_id = newId('task');
    const secret = `sbt_${randomBytes(16).toString('hex')}`;
    r.t.services.keys.add(secret, { name: `task:${task_id}`, role: 'agent', task_id });
    const headers = { authorization: `Bearer ${secret}` };
    for (let i = 0; i < 3; i++)
      expect((await r.touch({ tool_name: 'count.up', params: {} }, headers)).body.ok).toBe(true);
    const { status, body } = await r.touch({ tool_name: 'count.up', params: {} }, headers);
    expect(status).toBe(429);
    expect(body.error).toMatchObject({ code: 'TOUCH_CAP', details: { cap: 3 } });
  });

  it('writes a read touch once its backend answered: no row while it runs, then row, intent, decision and outcome', async () => {
    arm();
    const request_id = `latch-${randomBytes(4).toString('hex')}`;
    const call = r.touch({ request_id, tool_name: 'read.latch', params: {} });
    await waitFor(
      async () => inside,
      (n) => n === 1,
    );
    expect((await r.get(`/v1/touch/${request_id}`)).status).toBe(404);
    const ofThis = async () =>
      (await r.t.services.log.list({ limit: 1000 })).filter(
        (e) => e.envelope.redacted_summary.request_id === request_id,
      );
    expect(await ofThis()).toEqual([]);
    unlatch();
    expect((await call).body).toMatchObject({ ok: true, data: { latched: true } });
    expect((await r.get(`/v1/touch/${request_id}`)).body).toMatchObject({ ok: true, status: 'done' });
    expect((await ofThis()).map((e) => e.envelope.type)).toEqual([
      'agent.touch.requested',
      'agent.touch.completed',
    ]);
  });

  it('answers two reads with one request id at the same moment from the one that was written first', async () => {
    arm();
    const request_id = `twice-${randomBytes(4).toString('hex')}`;
    const both = [0, 1].map(() => r.touch({ request_id, tool_name: 'read.latch', params: {} }));
    await waitFor(
      async () => inside,
      (n) => n === 2,
    );
    unlatch();
    const answers = await Promise.all(both);
    expect(answers.map((a) => a.body.ok)).toEqual([true, true]);
    const requested = (await r.t.services.log.list({ type: 'agent.touch.requested', limit: 1000 })).filter(
      (e) => e.envelope.redacted_summary.request_id === request_id,
    );
    expect(requested).toHaveLength(1);
  });

  it('counts reads still running, which have no row yet, against the task cap', async () => {
    arm();
    const task_id = newId('task');
    const secret = `sbt_${randomBytes(16).toString('hex')}`;
    r.t.services.keys.add(secret, { name: `task:${task_id}`, role: 'agent', task_id });
    const headers = { authorization: `Bearer ${secret}` };
    const running = Array.from({ length: 3 }, () =>
      r.touch({ tool_name: 'read.latch', params: {} }, headers),
    );
    await waitFor(
      async () => inside,
      (n) => n === 3,
    );
    const fourth = await r.touch({ tool_name: 'read.latch', params: {} }, headers);
    expect(fourth.body.error).toMatchObject({ code: 'TOUCH_CAP', details: { cap: 3 } });
    unlatch();
    expect((await Promise.all(running)).map((a) => a.body.ok)).toEqual([true, true, true]);
  });

  it('answers the same request id once: a repeat does not run the tool again', async () => {
    const request_id = `count-${randomBytes(4).toString('hex')}`;
    const a = await r.touch({ request_id, tool_name: 'count.up', params: { n: 1 } });
    const b = await r.touch({ request_id, tool_name: 'count.up', params: { n: 1 } });
    expect((b.body.data as { runs: number }).runs).toBe((a.body.data as { runs: number }).runs);
  });

  it('takes the caller from the key, never from the body', async () => {
    const { body } = await r.touch({ tool_name: 'count.up', params: {}, caller: 'someone-else' });
    const events = await r.t.services.log.list({ type: 'agent.touch.completed' });
    const mine = events.find((e) => e.envelope.redacted_summary.request_id === body.request_id)!;
    expect(mine.envelope.redacted_summary.caller).toBe('bot');
    expect(mine.envelope.actor.agent_id).toBe('bot');
  });

  it('refuses a tool result that is not JSON', async () => {
    const { body } = await r.touch({ tool_name: 'bad.date', params: {} });
    expect(body.error).toMatchObject({ code: 'TOOL_FAILED', details: { status: 'not_json' } });
    expect((body.error as { message: string }).message).toContain('result.at is a Date');
  });

  it('re-checks an admin tool where it executes', async () => {
    const { body } = await r.touch({ tool_name: 'ops.purge', params: {} });
    expect(body).toMatchObject({ ok: true, data: { purged: 3 } });
    const requested = await r.t.services.log.list({ type: 'agent.tool.requested' });
    const forPurge = requested.filter((e) => e.envelope.subject.tool === 'ops.purge');
    expect(forPurge.length).toBe(2);
  });

  it('keeps PII out of the delivered result, the events and the sealed response', async () => {
    const { body } = await r.touch({ tool_name: 'phone.book', params: {} });
    expect(JSON.stringify(body)).not.toContain('13800138000');
    expect(JSON.stringify(body)).not.toContain('11010519491231002X');
    expect(body.data).toEqual([
      { name: 'Zhang Wei', phone: '[redacted:cn_mobile]', id_card: '[redacted:cn_id_card]' },
    ]);
    const events = await r.t.services.log.list({ limit: 1000 });
    const all = JSON.stringify(events);
    expect(all).not.toContain('13800138000');
    expect(all).not.toContain('11010519491231002X');
    const done = events.find(
      (e) =>
        e.envelope.type === 'agent.touch.completed' &&
        e.envelope.redacted_summary.request_id === body.request_id,
    )!;
    expect(done.envelope.redacted_summary).toMatchObject({
      outcome: 'ok',
      redacted: { cn_mobile: 1, cn_id_card: 1 },
    });
    const sealed = await r.t.services.vault.get(done.envelope.payload_ref!);
    expect(sealed!.toString()).not.toContain('13800138000');
  });

  it('logs a touch as requested then completed, the gate decision between them, all caused by the request', async () => {
    const { body } = await r.touch({ tool_name: 'count.up', params: { n: 2 } });
    const events = (await r.t.services.log.list({ limit: 1000 })).map((e) => e.envelope);
    const requested = events.find(
      (e) => e.type === 'agent.touch.requested' && e.redacted_summary.request_id === body.request_id,
    )!;
    const chain = events.filter((e) => e.correlation_id === requested.correlation_id).map((e) => e.type);
    expect(chain).toEqual([
      'agent.touch.requested',
      'agent.tool.requested',
      'agent.tool.authorized',
      'agent.touch.completed',
    ]);
    expect(JSON.stringify(requested)).not.toContain('"n":2');
  });

  it('seals a read’s intent and its response as one vault record, which both events and GET read', async () => {
    const vaultRows = async () =>
      Number(
        (
          await r.t.services.db.query<{ n: number }>({ text: 'SELECT count(*) AS n FROM vault', values: [] })
        )[0]!.n,
      );
    const before = await vaultRows();
    const { body } = await r.touch({ tool_name: 'count.up', params: { n: 7 } });
    expect(body.ok).toBe(true);
    expect(await vaultRows()).toBe(before + 1);
    const events = (await r.t.services.log.list({ limit: 1000 })).map((e) => e.envelope);
    const mine = events.filter(
      (e) =>
        e.correlation_id ===
        events.find(
          (x) => x.type === 'agent.touch.requested' && x.redacted_summary.request_id === body.request_id,
        )!.correlation_id,
    );
    const refs = new Set(
      mine.filter((e) => e.payload_ref).map((e) => `${e.payload_ref} ${e.payload_digest}`),
    );
    expect(refs.size).toBe(1);
    const sealed = JSON.parse((await r.t.services.vault.get(mine[0]!.payload_ref!))!.toString());
    expect(sealed).toMatchObject({
      tool: 'count.up',
      input: { n: 7 },
      action: 'reach.module',
      kind: 'other',
    });
    expect(sealed.response).toEqual(body);
    expect((await r.get(`/v1/touch/${body.request_id}`)).body).toEqual({ ...body, status: 'done' });
  });

  it('seals the intent as the gate reads it back, so a shadow run re-decides a touch on its params', async () => {
    const { body } = await r.touch({ tool_name: 'count.up', params: { n: 41 } });
    expect(body.ok).toBe(true);
    expect((await r.touch({ tool_name: 'count.up', params: { n: 40 } })).body.ok).toBe(true);
    const draft = [
      'rules:',
      '  - id: no-41',
      '    when: \'tool == "count.up" && kind == "other" && has(input.n) && input.n == 41\'',
      '    decision: deny',
      '    reason_code: NO_41',
    ].join('\n');
    const res = await r.t.app.request('/v1/policy/shadow', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('admin') },
      body: JSON.stringify({ policy_yaml: draft, since: '1h' }),
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as {
      changed: { tool: string; before: string; after: string; rule: string | null }[];
    };
    // Only the touch with n 41 is newly denied, by the draft's rule: the others' params read as they were.
    expect(report.changed.filter((c) => c.tool === 'count.up' && c.after === 'deny')).toEqual([
      expect.objectContaining({ before: 'allow', after: 'deny', rule: 'no-41' }),
    ]);
  });
});

describe('without a gate', () => {
  let r: ReachApp;
  beforeAll(async () => {
    r = await reachApp({ tools: inProcess, gate: false });
  });
  afterAll(() => r.cleanup());

  it('fails closed: nothing is reached', async () => {
    const { status, body } = await r.touch({ tool_name: 'count.up', params: {} });
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: 'DENIED', details: { reason_code: 'GATE_UNAVAILABLE' } });
  });
});

describe('the touch request itself', () => {
  let r: ReachApp;
  beforeAll(async () => {
    r = await reachApp({ tools: inProcess });
  });
  afterAll(() => r.cleanup());

  it('answers malformed JSON, a wrong content type and an oversized body with the core errors', async () => {
    const bad = await r.t.app.request('/v1/touch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: '{"tool_name":',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    const type = await r.t.app.request('/v1/touch', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...auth('agent') },
      body: '{}',
    });
    expect(type.status).toBe(415);
    const big = await r.t.app.request('/v1/touch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ tool_name: 'count.up', params: { x: 'y'.repeat(1_100_000) } }),
    });
    expect(big.status).toBe(413);
    const anon = await r.t.app.request('/v1/touch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anon.status).toBe(401);
    const approver = await r.touch({ tool_name: 'count.up', params: {} }, auth('approver'));
    expect(approver.status).toBe(403);
  });

  it('answers unknown fields and wrong types in the request as INVALID_PARAMS naming them', async () => {
    const { status, body } = await r.touch({ tool_name: 'count.up', params: {}, channel: 'fax', colour: 1 });
    expect(status).toBe(400);
    const paths = (body.error as { details: { problems: { path: string }[] } }).details.problems.map(
      (p) => p.path,
    );
    expect(paths).toEqual(expect.arrayContaining(['channel', 'colour']));
  });

  it('answers 404 for an unknown touch id and for a malformed one', async () => {
    expect((await r.get('/v1/touch/tch_nope')).status).toBe(404);
    expect((await r.get('/v1/touch/%2e%2e%2fetc')).status).toBe(404);
  });
});

describe('in-process tools from reach.modules', () => {
  it('loads a module exporting { name, schema, run } and touches it with no network hop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-reach-mod-'));
    const file = join(dir, 'tools.mjs');
    writeFileSync(
      file,
      `export const add = { name: 'math.add', description: 'adds', schema: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'number' }, b: { type: 'number' } } }, run: (p) => ({ sum: p.a + p.b }) };\n`,
    );
    const r = await reachApp({ config: { reach: { modules: [file] } } });
    try {
      const listed = await r.get('/v1/tools');
      expect(
        (listed.body.tools as { name: string; kind: string }[]).find((t) => t.name === 'math.add'),
      ).toMatchObject({ kind: 'module' });
      const { body } = await r.touch({ tool_name: 'math.add', params: { a: 2, b: 3 } });
      expect(body).toMatchObject({ ok: true, data: { sum: 5 } });
      const bad = await r.touch({ tool_name: 'math.add', params: { a: 2, b: 'three' } });
      expect(bad.body.error).toMatchObject({ code: 'INVALID_PARAMS' });
    } finally {
      await r.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a touch left running by a gateway that stopped', () => {
  it('reads as failed with TIMEOUT, and the sweep marks it so', async () => {
    const r = await reachApp({ tools: inProcess });
    try {
      const now = Date.now();
      const row = {
        tenant_id: 'default',
        caller: 'bot',
        request_id: 'left-running',
        task_id: null,
        owner: 'bot',
        tool: 'count.up',
        channel: 'async',
        params_digest: 'sha256:x',
        status: 'running',
        approval_id: null,
        response_ref: null,
        error_code: null,
        summary: null,
        cost_ms: null,
        created_at: now - 600_000,
        updated_at: now - 600_000,
        deadline_at: now - 590_000,
        expires_at: now + 86_400_000,
        callback: null,
      };
      await r.t.services.db.query(q.insertTouch(row));
      const before = await r.get('/v1/touch/left-running');
      expect(before.body).toMatchObject({ ok: false, status: 'failed', error: { code: 'TIMEOUT' } });
      const [stored] = await r.t.services.db.query<{ status: string }>(
        q.selectTouch('default', 'bot', 'left-running'),
      );
      expect(stored!.status).toBe('running');
      await r.t.services.db.query(q.failInterrupted(now - 60_000, now));
      const after = await r.get('/v1/touch/left-running');
      expect(after.body).toMatchObject({
        ok: false,
        status: 'failed',
        error: { code: 'TIMEOUT', message: expect.stringContaining('stopped') },
      });
    } finally {
      await r.cleanup();
    }
  });
});
