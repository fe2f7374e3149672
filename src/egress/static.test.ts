import { describe, expect, it } from 'vitest';
import { checkUrl, checkUrlStatic, compileEgressPolicy } from './ssrf.js';
import { BLOCKED_URLS, testEgress } from './testing.js';

const noDns = async () => {
  throw Object.assign(new Error('no DNS in this test'), { code: 'ENOTFOUND' });
};
const policy = compileEgressPolicy(['127.0.0.1'], { resolve: noDns });

describe('the early check without DNS', () => {
  it.each(BLOCKED_URLS)('refuses %s for its %s', (url, reason) => {
    expect(checkUrlStatic(url, policy)).toMatchObject({ kind: 'blocked', reason });
  });

  it('gives the same verdict as the full check for every URL it refuses', async () => {
    for (const [url] of BLOCKED_URLS) {
      const full = await checkUrl(url, policy);
      expect(full, url).toMatchObject(checkUrlStatic(url, policy));
    }
  });

  it('lets a public name through to DNS and an allowed literal through as it is', () => {
    expect(checkUrlStatic('https://hooks.example.com/x?token=1', policy)).toMatchObject({
      kind: 'name',
      host: 'hooks.example.com',
    });
    expect(checkUrlStatic('http://127.0.0.1:8080/x', policy)).toMatchObject({ kind: 'literal' });
  });
});

describe('egress.send', () => {
  it.each(BLOCKED_URLS)('answers blocked for %s without dialling (%s)', async (url, reason) => {
    const egress = testEgress(['127.0.0.1']);
    try {
      const r = await egress.send({ url, headers: {}, body: '{}' });
      expect(r).toMatchObject({ sent: false, error: 'blocked', blocked: { reason } });
      expect(r.detail).not.toMatch(/passwd|meta-data|secret/);
    } finally {
      await egress.close();
    }
  });
});
