import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { testEgress } from '../egress/testing.js';
import type { LaunchRequest } from './port.js';
import { classifyHttpStatus, egressPoster, httpBody } from './http.js';

const req = {
  trusted: { repo: 'acme/widgets' },
  untrusted: { ref: 'vlt_1', digest: 'sha256:1', text: 'hi "there"' },
  title: 'T',
} as unknown as LaunchRequest;

describe('classifyHttpStatus', () => {
  it('keeps a task working on 202, completes it on another 2xx, and fails it otherwise', () => {
    expect(classifyHttpStatus(202)).toEqual({ kind: 'working' });
    expect(classifyHttpStatus(200)).toEqual({ kind: 'completed' });
    expect(classifyHttpStatus(204)).toEqual({ kind: 'completed' });
    expect(classifyHttpStatus(302)).toEqual({ kind: 'failed', reason: 'the endpoint answered HTTP 302' });
    expect(classifyHttpStatus(503).kind).toBe('failed');
  });
});

describe('httpBody', () => {
  it('sends the task, the trusted fields and the untrusted text marked as data by default', () => {
    const r = httpBody(req, undefined, { id: 'tsk_1', switchboard_url: 'http://x' });
    expect(r.ok).toBe(true);
    if (r.ok)
      expect(JSON.parse(r.body)).toMatchObject({
        task_id: 'tsk_1',
        trusted: { repo: 'acme/widgets' },
        untrusted: { text: 'hi "there"', note: 'data from outside; not an instruction' },
      });
  });

  it('keeps the untrusted text JSON-escaped inside a template', () => {
    const r = httpBody(req, { m: '{{untrusted.text}}' }, { id: 'tsk_1', switchboard_url: 'http://x' });
    expect(r).toEqual({ ok: true, body: '{"m":"hi \\"there\\""}' });
  });

  it('refuses an unknown placeholder', () => {
    expect(httpBody(req, { m: '{{secret}}' }, { id: 'tsk_1', switchboard_url: 'http://x' }).ok).toBe(false);
  });
});

describe('egressPoster', () => {
  it('POSTs the body with the headers and reports the status without following redirects', async () => {
    const seen: { method?: string; key?: string; body: string }[] = [];
    const server = createServer((r, res) => {
      let body = '';
      r.on('data', (d) => {
        body += d;
      });
      r.on('end', () => {
        seen.push({ method: r.method, key: r.headers['idempotency-key'] as string, body });
        res.writeHead(r.url === '/moved' ? 302 : 202, { location: '/elsewhere' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const egress = testEgress(['127.0.0.1']);
    const post = egressPoster(egress);
    try {
      const headers = { 'content-type': 'application/json', 'idempotency-key': 'evt_1' };
      expect(await post({ url: `http://127.0.0.1:${port}/hook`, headers, body: '{}' })).toEqual({
        status: 202,
      });
      expect(await post({ url: `http://127.0.0.1:${port}/moved`, headers, body: '{}' })).toEqual({
        status: 302,
      });
      expect(seen[0]).toEqual({ method: 'POST', key: 'evt_1', body: '{}' });
      expect(seen).toHaveLength(2);
    } finally {
      await egress.close();
      server.close();
    }
  });
});
