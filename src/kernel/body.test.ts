import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, errorBody } from '../errors/index.js';
import { readJson } from './body.js';
import type { AppEnv } from './module.js';

const app = new Hono<AppEnv>();
const schema = z.strictObject({ name: z.string().max(10) });
app.post('/x', async (c) => c.json(await readJson(c, schema, 64)));
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
