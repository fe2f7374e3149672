import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostPolicy } from './origin.js';

const loopback = { host: '127.0.0.1', public_url: undefined, allowed_hosts: [] as string[] };
const code = (err: { code: string } | undefined) => err?.code;

describe('Host validation (DNS rebinding)', () => {
  const p = hostPolicy(loopback);

  it('accepts localhost, the loopback addresses and any IP address, with or without a port', () => {
    for (const host of [
      'localhost',
      'localhost:8787',
      '127.0.0.1:8787',
      '[::1]:8787',
      '[::1]',
      '10.1.2.3',
      'app.localhost',
    ])
      expect(p.check(host, undefined)).toBeUndefined();
  });

  it('refuses a name nobody configured, saying which settings admit it', () => {
    const err = p.check('evil.example.com:8787', undefined);
    expect(err).toMatchObject({ code: 'host_not_allowed', status: 403 });
    expect(err?.message).toContain('server.allowed_hosts');
    expect(err?.message).toContain('server.public_url');
  });

  it('refuses an empty or malformed Host, and lets a request with no Host header at all pass', () => {
    expect(p.check(undefined, undefined)).toBeUndefined();
    expect(code(p.check(undefined, 'http://evil.example.com'))).toBe('origin_not_allowed');
    for (const host of ['', 'a b', 'user@127.0.0.1', '127.0.0.1/x', 'x\\y']) {
      expect(code(p.check(host, undefined))).toBe('host_not_allowed');
    }
  });

  it('accepts the listen name, the public URL host and the allowed names (exact, case-insensitive, *.suffix)', () => {
    const q = hostPolicy({
      host: 'gw.internal',
      public_url: 'https://Switchboard.Example.com/base',
      allowed_hosts: ['proxy.example.net', '*.corp.example'],
    });
    for (const host of [
      'gw.internal:8787',
      'switchboard.example.com',
      'PROXY.example.net',
      'a.b.corp.example',
    ])
      expect(q.check(host, undefined)).toBeUndefined();
    for (const host of ['corp.example', 'example.com', 'evilcorp.example'])
      expect(code(q.check(host, undefined))).toBe('host_not_allowed');
  });

  it('adds nothing for a wildcard listen address, and * admits every name', () => {
    expect(code(hostPolicy({ ...loopback, host: '0.0.0.0' }).check('anything.example', undefined))).toBe(
      'host_not_allowed',
    );
    expect(
      hostPolicy({ ...loopback, allowed_hosts: ['*'] }).check('anything.example', 'https://x.example'),
    ).toBeUndefined();
  });

  it('never admits a name that is not configured, whatever it is (property)', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
    fc.assert(
      fc.property(
        fc.array(label, { minLength: 2, maxLength: 4 }),
        fc.option(fc.integer({ min: 1, max: 65535 })),
        (labels, port) => {
          const name = labels.join('.');
          fc.pre(!name.endsWith('.localhost') && name !== 'localhost');
          const host = port === null ? name : `${name}:${port}`;
          expect(code(p.check(host, undefined))).toBe('host_not_allowed');
          expect(hostPolicy({ ...loopback, allowed_hosts: [name] }).check(host, undefined)).toBeUndefined();
        },
      ),
    );
  });
});

describe('Origin validation', () => {
  const p = hostPolicy({ ...loopback, public_url: 'https://sb.example.com' });

  it('accepts no Origin (servers, CLIs, webhooks) and a page of this very origin', () => {
    expect(p.check('127.0.0.1:8787', undefined)).toBeUndefined();
    expect(p.check('127.0.0.1:8787', 'http://127.0.0.1:8787')).toBeUndefined();
    expect(p.check('sb.example.com', 'https://sb.example.com')).toBeUndefined();
  });

  it('refuses a page of another site, another port or another scheme, naming the setting', () => {
    for (const origin of [
      'http://evil.example.com',
      'http://localhost:3000',
      'file://',
      'chrome-extension://abc',
    ]) {
      const err = p.check('127.0.0.1:8787', origin);
      expect(err?.code).toBe('origin_not_allowed');
      expect(err?.message).toContain('server.allowed_hosts');
    }
  });

  it('lets Origin: null pass: our own no-referrer pages post forms with it (the Host rule still holds)', () => {
    expect(p.check('127.0.0.1:8787', 'null')).toBeUndefined();
    expect(code(p.check('evil.example.com', 'null'))).toBe('host_not_allowed');
  });

  it('accepts a page from a host in server.allowed_hosts', () => {
    const q = hostPolicy({ ...loopback, allowed_hosts: ['console.example.com'] });
    expect(q.check('127.0.0.1:8787', 'https://console.example.com')).toBeUndefined();
  });

  it('refuses the rebinding pair the MCP conformance suite sends', () => {
    expect(code(p.check('evil.example.com', 'http://evil.example.com'))).toBe('host_not_allowed');
  });
});
