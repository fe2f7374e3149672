import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/load.js';
import { parseConfig } from '../server/config.js';
import { parseSql } from './backends/sql-params.js';
import { processResult, renderText } from './context.js';
import { TOUCH_ERRORS } from './protocol.js';
import { closeSchema, compileInputSchema, explain } from './schema.js';
import { nearestNames } from './suggest.js';
import { tickets } from './testing.js';

function problems(config: Record<string, unknown>): string[] {
  try {
    parseConfig(config, 'test');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

const schema = { type: 'object', required: ['status'], properties: { status: { enum: ['open', 'closed'] } } };

describe('start-up checks of the tools section', () => {
  it('accepts the issue example', () => {
    expect(
      problems({
        tools: {
          'ticket.query': {
            kind: 'sql',
            input_schema: schema,
            sql: { database_env: 'TICKETS_DB_URL', query: 'SELECT * FROM tickets WHERE status = :status' },
            context: { mode: 'head_tail', keep: 5 },
            redact: ['cn_mobile'],
          },
          'weather.get': {
            kind: 'http',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
            http: {
              method: 'GET',
              url: 'https://weather.internal/v1?city={city}',
              headers: { authorization_env: 'WEATHER_TOKEN' },
            },
          },
          'report.build': { kind: 'command', command: ['./scripts/build-report'], channel: 'async' },
        },
      }),
    ).toEqual([]);
  });

  it('stops with one line per problem: a schema that does not compile, a SQL name and a URL field the schema lacks', () => {
    const found = problems({
      tools: {
        broken: {
          kind: 'command',
          command: ['true'],
          input_schema: { type: 'object', properties: { n: { type: 'integr' } } },
        },
        'ticket.query': {
          kind: 'sql',
          input_schema: schema,
          sql: { database_env: 'DB', query: 'SELECT * FROM tickets WHERE status = :stauts AND x = :status' },
        },
        'weather.get': {
          kind: 'http',
          input_schema: schema,
          http: { url: 'https://w.example/v1?city={city}' },
        },
      },
    });
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/^tools\.broken\.input_schema: does not compile/);
    expect(found[1]).toBe(
      'tools.ticket.query.sql.query: names :stauts, which input_schema does not declare; add it to input_schema.properties or fix the name',
    );
    expect(found[2]).toMatch(/^tools\.weather\.get\.http\.url: names \{city\}/);
  });

  it('refuses positional SQL parameters', () => {
    const found = problems({
      tools: {
        a: {
          kind: 'sql',
          input_schema: schema,
          sql: { database_env: 'DB', query: 'SELECT * FROM t WHERE s = ?' },
        },
      },
    });
    expect(found).toEqual([
      'tools.a.sql.query: uses positional parameters (? or $1); name them (:status) so each binds a schema property',
    ]);
  });

  it('refuses a backend block of another kind and unknown keys', () => {
    const found = problems({
      tools: {
        b: { kind: 'http', http: { url: 'https://x.example/' }, command: ['true'] },
        c: { kind: 'command', command: ['true'], colour: 'red' },
      },
    });
    expect(found.some((l) => l.startsWith('tools.b.command: a http tool takes no command block'))).toBe(true);
    expect(found.some((l) => l.startsWith('tools.c') && l.includes('colour'))).toBe(true);
  });
});

describe('SQL named parameters', () => {
  it('finds names outside literals, comments and casts, and numbers them once each', () => {
    const t = parseSql(
      "SELECT ':nope', x::int FROM t -- :comment\n WHERE a = :a AND b = :b /* :c */ OR a2 = :a AND s = $$:d$$",
    );
    expect(t.names).toEqual(['a', 'b']);
    expect(t.positional).toContain('a = $1 AND b = $2');
    expect(t.positional).toContain('a2 = $1');
    expect(t.positionalMarkers).toBe(0);
  });
});

describe('input schemas', () => {
  it('closes object schemas that say nothing about extra properties, and leaves an open one open', () => {
    const closed = closeSchema({
      type: 'object',
      properties: {
        a: { type: 'object', properties: { b: { type: 'string' } } },
        o: { type: 'object', additionalProperties: true },
      },
    });
    expect(closed.additionalProperties).toBe(false);
    expect((closed.properties as Record<string, Record<string, unknown>>).a!.additionalProperties).toBe(
      false,
    );
    expect((closed.properties as Record<string, Record<string, unknown>>).o!.additionalProperties).toBe(true);
  });

  it('phrases nested failures with their path and what was sent', () => {
    const c = compileInputSchema({
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', required: ['qty'], properties: { qty: { type: 'integer', minimum: 1 } } },
        },
      },
    });
    if (!c.ok) throw new Error(c.message);
    const params = { items: [{ qty: 2 }, { qty: 0 }, {}] };
    expect(c.validate(params)).toBe(false);
    const found = explain(c.validate.errors ?? [], params, ['items']);
    expect(found.map((p) => `${p.path} ${p.message}`)).toEqual([
      'params.items[1].qty must be >= 1; you sent the integer 0',
      'params.items[2].qty is required; add it',
    ]);
  });

  it('refuses a top level that is not an object', () => {
    expect(compileInputSchema({ type: 'string' }).ok).toBe(false);
  });
});

describe('nearest names', () => {
  it('finds typos, swapped letters and a missing prefix', () => {
    const names = ['ticket.query', 'ticket.update', 'weather.get', 'memory_read'];
    expect(nearestNames('ticket.qeury', names)).toEqual(['ticket.query']);
    expect(nearestNames('query', names)).toEqual(['ticket.query']);
    expect(nearestNames('weather_get', names)).toEqual(['weather.get']);
    expect(nearestNames('deploy.prod', names)).toEqual([]);
  });
});

describe('context processing', () => {
  const rows = tickets();

  it('keeps every field of the 400 rows in head_tail and cuts the tokens by more than 80 %', () => {
    const p = processResult(rows, {
      mode: 'head_tail',
      keep: 5,
      max_string: 500,
      redact: ['cn_mobile', 'cn_id_card', 'bank_card', 'email'],
    });
    expect(p.report.total_items).toBe(400);
    expect(p.report.omitted_items).toBe(390);
    for (const f of ['id', 'title', 'status', 'reporter_phone', 'note']) expect(p.text).toContain(`${f}: `);
    expect(p.report.tokens_after / p.report.tokens_before).toBeLessThan(0.2);
    expect(p.text).not.toMatch(/1[3-9]\d{9}/);
    expect(p.report.redacted.cn_mobile).toBe(400);
  });

  it('summarizes with counts of enum-like fields over all rows and a sample', () => {
    const p = processResult(rows, { mode: 'summary', keep: 3, max_string: 500, redact: [] });
    const d = p.data as {
      total: number;
      counts: Record<string, Record<string, number>>;
      sample: unknown[];
      ranges: Record<string, unknown>;
    };
    expect(d.total).toBe(400);
    expect(d.counts.status).toEqual({ open: 134, pending: 133, closed: 133 });
    expect(d.counts.title).toBeUndefined();
    expect(d.ranges.id).toEqual({ min: 1, max: 400 });
    expect(d.sample).toHaveLength(3);
  });

  it('leaves a short list whole and renders rows as field: value lines', () => {
    const p = processResult([{ a: 1, b: 'x' }], { mode: 'head_tail', keep: 5, max_string: 500, redact: [] });
    expect(p.data).toEqual([{ a: 1, b: 'x' }]);
    expect(renderText(p.data)).toBe('a: 1, b: x');
  });

  it('passes raw results through, redacted', () => {
    const p = processResult(
      { phone: '13800138000' },
      { mode: 'raw', keep: 5, max_string: 500, redact: ['cn_mobile'] },
    );
    expect(p.data).toEqual({ phone: '[redacted:cn_mobile]' });
    expect(p.text).toBe('phone: [redacted:cn_mobile]');
  });
});

describe('the documentation', () => {
  it('lists every touch error code with its HTTP status in docs/reach.md', () => {
    const doc = readFileSync(new URL('../../docs/reach.md', import.meta.url), 'utf8');
    for (const [code, e] of Object.entries(TOUCH_ERRORS))
      expect(doc).toContain(`| \`${code}\` | ${e.status} |`);
  });

  it('documents every tools and reach key in docs/config.md', () => {
    const doc = readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8');
    for (const k of [
      'kind',
      'description',
      'input_schema',
      'timeout',
      'timeout_ms',
      'permission',
      'concurrency',
      'channel',
      'estimate_ms',
      'context.mode',
      'redact',
      'sql.query',
      'http.url',
      'command',
    ])
      expect(doc).toContain(`\`tools.<name>.${k}\``);
    for (const k of [
      'touch_cap_per_task',
      'max_result_bytes',
      'result_ttl_seconds',
      'modules',
      'memory.enabled',
      'memory.short_term',
      'memory.max_value_bytes',
    ])
      expect(doc).toContain(`\`reach.${k}\``);
  });
});
