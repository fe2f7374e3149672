import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTouchRequest, touchRequestSchema, wellFormed } from './protocol.js';

/** Values near every bound the schema has, and the kinds of value a JSON body or an MCP call carries. */
const field = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    0,
    -0,
    1,
    2,
    3,
    1.5,
    -1,
    3600,
    3600.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ),
  fc.constantFrom('', 'x', 'sync', 'async', 'stream', 'SYNC', 'tch_1', 'a b', 'ok:id-1.2_3', 'x'.repeat(200)),
  fc.constantFrom('x'.repeat(201), 'y'.repeat(128), 'y'.repeat(129)),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
);
const params = fc.oneof(
  fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
  fc.constant(JSON.parse('{"__proto__": {"x": 1}, "a": 1}')),
  fc.constant(Object.create(null) as Record<string, unknown>),
  fc.constant(new Map()),
  fc.constant([1, 2]),
  field,
);
const NAMES = ['request_id', 'tool_name', 'params', 'channel', 'timeout', 'retry', 'callback', 'caller'];
/** A request whose every field is at or near its bounds, then, half the time, one field set to anything. */
const valid = fc.record(
  {
    request_id: fc.constantFrom('tch_1', 'a:b.c-d_e', 'y'.repeat(128)),
    tool_name: fc.constantFrom('bench.echo', 'x', 'x'.repeat(200)),
    params: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
    channel: fc.constantFrom('sync', 'async', 'stream'),
    timeout: fc.oneof(fc.constantFrom(Number.MIN_VALUE, 0.001, 1, 3600), fc.double({ min: 0, max: 3600 })),
    retry: fc.constantFrom(0, 1, 2, -0),
    callback: fc.constantFrom('hooks', 'c'.repeat(200)),
    caller: fc.constantFrom('', 'me', 'c'.repeat(200)),
  },
  { requiredKeys: ['tool_name'] },
);
const request = fc
  .tuple(valid, fc.option(fc.tuple(fc.constantFrom(...NAMES, 'extra'), fc.oneof(field, params))))
  .map(([r, change]) => (change ? { ...r, [change[0]]: change[1] } : r));

describe('the touch request fast path', () => {
  it('accepts only what the schema accepts, as the value the schema answers', () => {
    fc.assert(
      fc.property(request, (value) => {
        const quick = wellFormed(value);
        const full = touchRequestSchema.safeParse(value);
        if (quick === undefined) return;
        expect(full.success).toBe(true);
        expect(quick).toStrictEqual(full.data);
        expect(Object.keys(quick)).toEqual(Object.keys(full.data!));
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the requests callers send: a tool and its params, and every field set within its bounds', () => {
    const typical = { tool_name: 'bench.echo', params: { text: 'hi' } };
    expect(wellFormed(typical)).toStrictEqual(touchRequestSchema.parse(typical));
    const full = {
      request_id: 'run-1:a.b_c',
      tool_name: 'ticket.query',
      params: { status: 'open', nested: { a: [1] } },
      channel: 'async',
      timeout: 2.5,
      retry: 2,
      callback: 'hooks',
      caller: 'ignored',
    };
    expect(wellFormed(full)).toStrictEqual(touchRequestSchema.parse(full));
    expect(Object.keys(wellFormed(full)!)).toEqual(NAMES);
  });

  it('copies the params, so defaults filled in later never reach the caller’s object', () => {
    const mine = { text: 'hi' };
    const parsed = wellFormed({ tool_name: 'bench.echo', params: mine })!;
    expect(parsed.params).toEqual(mine);
    expect(parsed.params).not.toBe(mine);
  });

  it('leaves every malformed request to the schema, which names each field', () => {
    const r = parseTouchRequest({ tool_name: 'x', params: [], colour: 'red' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const paths = (r.response.error!.details!.problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['colour', 'params']));
  });
});
