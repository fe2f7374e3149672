import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, errorBody } from '../errors/index.js';
import { readJson } from './body.js';
import type { AppEnv } from './module.js';

const app = new Hono<AppEnv>();
const schema = z.strictObject({ name: z.string().max(10) });
app.post('/x', async (c) => c.json(await readJson(c, schema, 64)));
app.post('/any', async (c) => c.json({ ok: (await readJson(c, z.unknown(), 1 << 20)) !== undefined }));
app.onError((err, c) =>
  err instanceof AppError ? c.json(errorBody(err), err.status as 400) : c.json({ bug: String(err) }, 500),
);

async function post(body: string, type = 'application/json') {
  const res = await app.request('/x', { method: 'POST', body, headers: { 'content-type': type } });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

describe('JSON bodies', () => {
  it('accepts a valid body', async () => {
    expect(await post('{"name":"ok"}')).toEqual({ status: 200, body: { name: 'ok' } });
  });
  it('answers malformed JSON with 400 invalid_json', async () => {
    expect((await post('{"name":')).body.error?.code).toBe('invalid_json');
  });
  it('answers a wrong type with 400 validation_failed naming the field', async () => {
    const r = await post('{"name":5}');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('name'),
    });
  });
  it('rejects an unknown field', async () => {
    expect((await post('{"name":"a","to":"ceo@example.com"}')).body.error?.code).toBe('validation_failed');
  });
  it('answers an oversized body with 413', async () => {
    expect((await post(JSON.stringify({ name: 'x'.repeat(200) }))).status).toBe(413);
  });
  it('answers a non-JSON content type with 415', async () => {
    expect((await post('name=x', 'application/x-www-form-urlencoded')).status).toBe(415);
  });
  it('rejects bytes that are not UTF-8', async () => {
    const res = await app.request('/x', {
      method: 'POST',
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
  });
});

describe('JSON the log could not hash', () => {
  async function any(body: string) {
    const res = await app.request('/any', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
  }

  it('answers a lone surrogate with 400 unrepresentable_json naming where it is', async () => {
    const r = await any('{"summary":"done \\ud83d"}');
    expect(r).toMatchObject({ status: 400, body: { error: { code: 'unrepresentable_json' } } });
    expect(r.body.error?.message).toContain('summary');
  });

  it('answers nesting past 64 with 400 json_too_deep, and takes 64', async () => {
    expect((await any(`${'['.repeat(65)}${']'.repeat(65)}`)).body.error?.code).toBe('json_too_deep');
    expect((await any(`${'['.repeat(64)}${']'.repeat(64)}`)).status).toBe(200);
    expect((await any(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).body.error?.code).toBe(
      'json_too_deep',
    );
  });

  it('answers any string body with 200 or a 4xx from the catalogue, never 500 (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (text) => {
        const r = await any(text);
        expect(
          r.status === 200 ||
            ['invalid_json', 'unrepresentable_json', 'json_too_deep'].includes(r.body.error?.code ?? ''),
        ).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
