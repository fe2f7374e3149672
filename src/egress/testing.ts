import { type LookupAddress, lookup as systemLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';
import type { Dial } from './dispatcher.js';
import {
  createEgress,
  type Egress,
  type EgressOptions,
  type PostOptions,
  type PostRequest,
} from './egress.js';
import type { SendResult } from './send.js';
import type { Resolver } from './ssrf.js';

/**
 * Test helpers (not shipped behaviour). The safety rule: a test that names a private or metadata
 * address must not be able to reach it even if the guard under test were broken, so test sockets go
 * through `loopbackOnly`, and test DNS answers only what the test says.
 */

function isLoopback(address: string): boolean {
  try {
    return ipaddr.process(address).range() === 'loopback';
  } catch {
    return false;
  }
}

function strayAddress(address: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`test safety net: refused to dial ${address}, which is not loopback`), {
    code: 'ERR_TEST_NOT_LOOPBACK',
  });
}

/**
 * Wraps a socket layer so it dials loopback only, below the guard: an IP literal that is not loopback
 * is refused before `inner` sees it, and so is a name whose (already guarded) lookup answers anything
 * else. `inner` is undici's connector in `loopbackOnly`, a fake in the test of this net itself.
 */
export function loopbackGuard(inner: Dial): Dial {
  return (options) => {
    const given = ((options as { lookup?: LookupFunction }).lookup ?? systemLookup) as LookupFunction;
    const lookup: LookupFunction = (hostname, o, callback) =>
      given(hostname, o, (err, address, family) => {
        if (err) return callback(err, address, family);
        const all =
          typeof address === 'string' ? [address] : (address as LookupAddress[]).map((a) => a.address);
        const stray = all.find((a) => !isLoopback(a));
        if (stray !== undefined) return callback(strayAddress(stray), '', 0);
        callback(null, address, family);
      });
    const base = inner({ ...options, lookup } as buildConnector.BuildOptions);
    return (o, callback) => {
      const host = o.hostname.startsWith('[') ? o.hostname.slice(1, -1) : o.hostname;
      if (isIP(host) !== 0 && !isLoopback(host)) {
        callback(strayAddress(host), null);
        return;
      }
      base(o, callback);
    };
  };
}

/** Undici's sockets, to loopback only: what every test egress and test dispatcher dials with. */
export const loopbackOnly: Dial = loopbackGuard(buildConnector);

/** DNS for tests that name no host: every name is NXDOMAIN, nothing is asked of a real resolver. */
export const noDns: Resolver = async (hostname) => {
  throw Object.assign(new Error(`${hostname}: no DNS in tests`), { code: 'ENOTFOUND' });
};

/** An egress for tests: `allow` as given, loopback-only sockets, and `noDns` unless `resolve` is set. */
export function testEgress(
  allow: readonly string[] = ['127.0.0.1'],
  opts: Partial<EgressOptions> = {},
): Egress {
  return createEgress({ dial: loopbackOnly, resolve: noDns, ...opts, allow });
}

/** The post adapter with every raw attempt kept, for tests that assert what went out and how. */
export function capturingPost(egress: Egress, opts: Omit<PostOptions, 'onResult'> = {}) {
  const results: SendResult[] = [];
  return {
    results,
    post: (req: PostRequest) => egress.post(req, { ...opts, onResult: (r) => results.push(r) }),
  };
}

/**
 * URLs the egress guard refuses without a DNS lookup, in the forms they arrive in: other schemes
 * (any case, with stray spaces), user info, plain HTTP, metadata, private and loopback literals in
 * their odd spellings, bad ports, and what is not an absolute URL at all. Loopback is spelled
 * as ::1 and localhost, so a test may allow 127.0.0.1 for its receiver; each entry gives the reason.
 */
export const BLOCKED_URLS: readonly [string, string][] = [
  ['file:///etc/passwd', 'scheme'],
  ['file://localhost/etc/passwd', 'scheme'],
  [' FILE:///etc/passwd', 'scheme'],
  ['gopher://127.0.0.1:70/_SET%20x', 'scheme'],
  ['ftp://files.example.com/a', 'scheme'],
  ['sftp://files.example.com/a', 'scheme'],
  ['tftp://files.example.com/a', 'scheme'],
  ['data:text/plain,hello', 'scheme'],
  ['data:text/html;base64,PHNjcmlwdD4=', 'scheme'],
  ['ws://hooks.example.com/socket', 'scheme'],
  ['wss://hooks.example.com/socket', 'scheme'],
  ['javascript:alert(1)', 'scheme'],
  ['JavaScript:alert(document.cookie)', 'scheme'],
  ['mailto:ops@example.com', 'scheme'],
  ['ldap://directory.example.com/', 'scheme'],
  ['dict://127.0.0.1:11211/stats', 'scheme'],
  ['jar:file:///tmp/x.jar!/a', 'scheme'],
  ['blob:https://hooks.example.com/0b5d', 'scheme'],
  ['about:blank', 'scheme'],
  ['https://user:secret@hooks.example.com/x', 'userinfo'],
  ['https://user@hooks.example.com/x', 'userinfo'],
  ['https://:secret@hooks.example.com/x', 'userinfo'],
  ['https://hooks.example.com@10.0.0.1/x', 'userinfo'],
  ['http://hooks.example.com/x', 'https_required'],
  ['https://169.254.169.254/latest/meta-data/', 'metadata'],
  ['https://metadata.google.internal/computeMetadata/v1/', 'metadata'],
  ['https://[fd00:ec2::254]/latest', 'metadata'],
  ['https://10.0.0.1/hook', 'private_address'],
  ['https://0x0a.1/hook', 'private_address'],
  ['https://167772161/hook', 'private_address'],
  ['https://192.168.1.20/hook', 'private_address'],
  ['https://172.16.0.5/hook', 'private_address'],
  ['https://100.64.0.1/hook', 'private_address'],
  ['https://[::1]/hook', 'private_address'],
  ['https://[fd00::1]/hook', 'private_address'],
  ['https://[::ffff:10.0.0.1]/hook', 'private_address'],
  ['https://localhost/hook', 'private_address'],
  ['https://api.localhost/hook', 'private_address'],
  ['https://hooks.example.com:25/x', 'port'],
  ['https://hooks.example.com:22/x', 'port'],
  ['https://hooks.example.com:6667/x', 'port'],
  ['not a url', 'invalid_url'],
  ['//evil.example/x', 'invalid_url'],
  ['/relative/path', 'invalid_url'],
];
