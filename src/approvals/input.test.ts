import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth } from '../server/testing.js';
import { type ApprovalsHarness, approvalsHarness } from './testing.js';

const json = (role: 'agent' | 'approver' | 'admin') => ({
  ...auth(role),
  'content-type': 'application/json',
});

async function code(res: Response): Promise<[number, string]> {
  const body = (await res.json()) as { error?: { code: string } };
  return [res.status, body.error?.code ?? 'none'];
}

describe.each(await dialects())('bad input to the approvals API on %s', (dialect) => {
  let h: ApprovalsHarness;
  let id: string;
  const big = 'x'.repeat(2 * 1024 * 1024);
  beforeAll(async () => {
    h = await approvalsHarness(dialect);
    id = ((await (await h.ask()).json()) as { id: string }).id;
  });
  afterAll(async () => {
    await h.cleanup();
  });

  const post = (path: string, body: string, headers: Record<string, string> = json('agent')) =>
    h.app.request(path, { method: 'POST', headers, body });

  describe('POST /v1/approvals', () => {
    it.each([
      ['malformed JSON', '{"action":', 400, 'invalid_json'],
      ['a number for action', '{"action":1,"reason":"r"}', 400, 'validation_failed'],
      ['a missing reason', '{"action":"a"}', 400, 'validation_failed'],
      ['an empty action', '{"action":"","reason":"r"}', 400, 'validation_failed'],
      ['an unknown field', '{"action":"a","reason":"r","channel":"phone"}', 400, 'validation_failed'],
      [
        'payload_json that is not JSON',
        '{"action":"a","reason":"r","payload_json":"{nope"}',
        400,
        'validation_failed',
      ],
      [
        'payload_json that is an array',
        '{"action":"a","reason":"r","payload_json":"[1]"}',
        400,
        'validation_failed',
      ],
      [
        'a task id of the wrong kind',
        '{"action":"a","reason":"r","task_id":"apr_01JAAAAAAAAAAAAAAAAAAAAAAA"}',
        400,
        'validation_failed',
      ],
      ['a JSON array body', '[]', 400, 'validation_failed'],
    ])('answers %s with %i %s', async (_what, body, status, errorCode) => {
      expect(await code(await post('/v1/approvals', body))).toEqual([status, errorCode]);
    });

    it('answers an oversized body with 413', async () => {
      const body = JSON.stringify({ action: 'a', reason: big });
      expect(await code(await post('/v1/approvals', body))).toEqual([413, 'payload_too_large']);
    });

    it('answers a non-JSON content type with 415', async () => {
      const res = await post('/v1/approvals', 'action=a', {
        ...auth('agent'),
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(await code(res)).toEqual([415, 'unsupported_media_type']);
    });

    it.each(['-1', 'abc', '301', '1.5'])('answers ?wait=%s with 400', async (wait) => {
      const res = await post(`/v1/approvals?wait=${wait}`, '{"action":"a","reason":"r"}');
      expect(await code(res)).toEqual([400, 'bad_request']);
    });

    it('refuses an approver key (403) and no key (401)', async () => {
      expect((await post('/v1/approvals', '{"action":"a","reason":"r"}', json('approver'))).status).toBe(403);
      expect(
        (await post('/v1/approvals', '{"action":"a","reason":"r"}', { 'content-type': 'application/json' }))
          .status,
      ).toBe(401);
    });
  });

  describe('GET /v1/approvals/{id}', () => {
    it.each([
      ['an unknown id', 'apr_01JAAAAAAAAAAAAAAAAAAAAAAA'],
      ['an id of another kind', 'tsk_01JAAAAAAAAAAAAAAAAAAAAAAA'],
      ['a malformed id', 'apr_nope'],
    ])('answers %s with 404', async (_what, bad) => {
      expect(await code(await h.app.request(`/v1/approvals/${bad}`, { headers: auth('approver') }))).toEqual([
        404,
        'not_found',
      ]);
    });

    it.each(['x', '-1', '301'])('answers ?wait=%s with 400', async (wait) => {
      const res = await h.app.request(`/v1/approvals/${id}?wait=${wait}`, { headers: auth('approver') });
      expect(await code(res)).toEqual([400, 'bad_request']);
    });

    it('needs a key', async () => {
      expect((await h.app.request(`/v1/approvals/${id}`)).status).toBe(401);
    });
  });

  describe('GET /v1/approvals', () => {
    it('refuses an agent key with 403', async () => {
      expect(await code(await h.app.request('/v1/approvals', { headers: auth('agent') }))).toEqual([
        403,
        'forbidden',
      ]);
    });

    it.each(['state=done', 'limit=x', 'limit=100000'])('answers ?%s with 400', async (query) => {
      expect(
        await code(await h.app.request(`/v1/approvals?${query}`, { headers: auth('approver') })),
      ).toEqual([400, 'bad_request']);
    });
  });

  describe('POST /v1/approvals/{id}/decision', () => {
    const path = () => `/v1/approvals/${id}/decision`;
    it.each([
      ['malformed JSON', '{', 400, 'invalid_json'],
      ['a decision outside approve/reject', '{"decision":"maybe"}', 400, 'validation_failed'],
      ['a number for comment', '{"decision":"approve","comment":5}', 400, 'validation_failed'],
      ['an unknown field', '{"decision":"approve","by":"me"}', 400, 'validation_failed'],
      ['a missing decision', '{}', 400, 'validation_failed'],
    ])('answers %s with %i %s', async (_what, body, status, errorCode) => {
      expect(await code(await post(path(), body, json('approver')))).toEqual([status, errorCode]);
    });

    it('answers an oversized body with 413', async () => {
      const body = JSON.stringify({ decision: 'approve', comment: big });
      expect(await code(await post(path(), body, json('approver')))).toEqual([413, 'payload_too_large']);
    });

    it('answers a non-JSON content type with 415', async () => {
      expect(
        await code(
          await post(path(), 'decision=approve', { ...auth('approver'), 'content-type': 'text/plain' }),
        ),
      ).toEqual([415, 'unsupported_media_type']);
    });

    it.each([
      ['an unknown id', 'apr_01JAAAAAAAAAAAAAAAAAAAAAAA'],
      ['a malformed id', 'apr_'],
      ['an id of another kind', 'cap_01JAAAAAAAAAAAAAAAAAAAAAAA'],
    ])('answers %s with 404', async (_what, bad) => {
      expect(
        await code(await post(`/v1/approvals/${bad}/decision`, '{"decision":"approve"}', json('approver'))),
      ).toEqual([404, 'not_found']);
    });

    it('answers no key with 401 and leaves the approval pending', async () => {
      expect(
        (await post(path(), '{"decision":"approve"}', { 'content-type': 'application/json' })).status,
      ).toBe(401);
      const seen = (await (
        await h.app.request(`/v1/approvals/${id}`, { headers: auth('approver') })
      ).json()) as { status: string };
      expect(seen.status).toBe('pending');
    });
  });
});
