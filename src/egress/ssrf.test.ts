import { describe, expect, it } from 'vitest';
import { classifyAddress } from './addresses.js';
import {
  type BlockReason,
  type Resolver,
  checkUrl,
  compileEgressPolicy,
  egressAllowProblems,
  normalizeHost,
} from './ssrf.js';

/** A fake DNS: names the table needs, everything else NXDOMAIN. */
const zone: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.0.0.5'],
  'corp.example.com': ['172.20.1.1'],
  'home.example.com': ['192.168.1.10'],
  'loop.example.com': ['127.0.0.1'],
  'nip.example.com': ['127.0.0.2'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.1'],
  'meta.example.com': ['169.254.169.254'],
  'v6loop.example.com': ['::1'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'cgnat.example.com': ['100.64.1.1'],
  'ula.example.com': ['fd12:3456:789a::1'],
  'zero.example.com': ['0.0.0.0'],
  'ntfy.internal': ['10.9.9.9'],
  'api.svc.internal': ['10.8.8.8'],
  'partner.example.com': ['10.1.2.7'],
  localhost: ['127.0.0.1', '::1'],
};

const resolve: Resolver = async (host) => {
  const answers = zone[host];
  if (!answers) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const policy = compileEgressPolicy([], { resolve });
const listed = compileEgressPolicy(['127.0.0.1', '10.1.2.0/24', 'ntfy.internal', '*.svc.internal'], {
  resolve,
});

type Row = [url: string, expected: 'allowed' | BlockReason, note: string];

const table: Row[] = [
  // public targets
  ['https://hooks.example.com/in', 'allowed', 'a public name'],
  ['https://93.184.216.34/in', 'allowed', 'a public IPv4 literal'],
  ['https://[2606:2800:220:1:248:1893:25c8:1946]/', 'allowed', 'a public IPv6 literal'],
  ['https://v6.example.com/', 'allowed', 'a name with a public AAAA'],
  ['https://hooks.example.com:8443/in', 'allowed', 'an ordinary high port'],
  ['https://[64:ff9b::5db8:d822]/', 'allowed', 'NAT64 of a public IPv4'],
  ['https://[2002:5db8:d822::1]/', 'allowed', '6to4 of a public IPv4'],
  // scheme, credentials, ports, plain http
  ['ftp://hooks.example.com/', 'scheme', 'ftp'],
  ['file:///etc/passwd', 'scheme', 'file'],
  ['gopher://hooks.example.com:70/', 'scheme', 'gopher'],
  ['not a url', 'invalid_url', 'garbage'],
  ['https://user:pass@hooks.example.com/', 'userinfo', 'credentials in the URL'],
  ['https://hooks.example.com@127.0.0.1/', 'userinfo', 'a host disguised as userinfo'],
  ['https://hooks.example.com:25/', 'port', 'SMTP port'],
  ['https://hooks.example.com:6667/', 'port', 'IRC port'],
  ['http://hooks.example.com/in', 'https_required', 'plain http to an unlisted host'],
  // loopback in every spelling
  ['https://127.0.0.1/', 'private_address', 'loopback'],
  ['https://2130706433/', 'private_address', 'decimal 127.0.0.1'],
  ['https://0177.0.0.1/', 'private_address', 'octal 127.0.0.1'],
  ['https://0x7f.1/', 'private_address', 'hex, short form'],
  ['https://0x7f000001/', 'private_address', 'hex, one number'],
  ['https://127.1/', 'private_address', 'short form'],
  ['https://017700000001/', 'private_address', 'octal, one number'],
  ['https://127.000.000.001/', 'private_address', 'zero-padded'],
  ['https://%31%32%37.0.0.1/', 'private_address', 'percent-encoded'],
  ['https://127.0.0.1./', 'private_address', 'trailing dot'],
  ['https://[::1]/', 'private_address', 'IPv6 loopback'],
  ['https://[::ffff:127.0.0.1]/', 'private_address', 'IPv4-mapped loopback'],
  ['https://[0:0:0:0:0:ffff:7f00:1]/', 'private_address', 'IPv4-mapped loopback, long hex'],
  ['https://[::127.0.0.1]/', 'private_address', 'IPv4-compatible loopback'],
  ['https://localhost/', 'private_address', 'localhost'],
  ['https://LOCALHOST./', 'private_address', 'localhost, upper case, trailing dot'],
  ['https://api.localhost/', 'private_address', 'a *.localhost name'],
  ['https://0.0.0.0/', 'private_address', 'unspecified IPv4'],
  ['https://0/', 'private_address', '0 becomes 0.0.0.0'],
  ['https://[::]/', 'private_address', 'unspecified IPv6'],
  // private, link-local, CGNAT, multicast, reserved
  ['https://10.0.0.1/', 'private_address', '10/8'],
  ['https://172.16.0.1/', 'private_address', '172.16/12'],
  ['https://172.31.255.255/', 'private_address', 'top of 172.16/12'],
  ['https://192.168.0.1/', 'private_address', '192.168/16'],
  ['https://169.254.1.1/', 'private_address', 'IPv4 link-local'],
  ['https://[fe80::1]/', 'private_address', 'IPv6 link-local'],
  ['https://100.64.0.1/', 'private_address', 'CGNAT'],
  ['https://224.0.0.1/', 'private_address', 'IPv4 multicast'],
  ['https://[ff02::1]/', 'private_address', 'IPv6 multicast'],
  ['https://255.255.255.255/', 'private_address', 'broadcast'],
  ['https://240.0.0.1/', 'private_address', 'reserved 240/4'],
  ['https://192.0.2.1/', 'private_address', 'documentation range'],
  ['https://198.18.0.1/', 'private_address', 'benchmarking range'],
  ['https://[fd12:3456:789a::1]/', 'private_address', 'unique-local'],
  ['https://[fec0::1]/', 'private_address', 'deprecated site-local'],
  ['https://[2001:db8::1]/', 'private_address', 'IPv6 documentation'],
  ['https://[64:ff9b::a00:1]/', 'private_address', 'NAT64 of 10.0.0.1'],
  ['https://[64:ff9b::7f00:1]/', 'private_address', 'NAT64 of 127.0.0.1'],
  ['https://[2002:7f00:1::]/', 'private_address', '6to4 of 127.0.0.1'],
  ['https://[2002:c0a8:101::1]/', 'private_address', '6to4 of 192.168.1.1'],
  ['https://[2001:0:5db8:d822::80ff:fffe]/', 'private_address', 'Teredo whose client is 127.0.0.1'],
  ['https://[::ffff:0:a00:1]/', 'private_address', 'IPv4-translated 10.0.0.1'],
  // cloud metadata
  ['https://169.254.169.254/latest/meta-data/', 'metadata', 'IMDS'],
  ['http://169.254.169.254/', 'https_required', 'IMDS over http fails earlier, still refused'],
  ['https://[fd00:ec2::254]/', 'metadata', 'AWS IMDS over IPv6'],
  ['https://[::ffff:169.254.169.254]/', 'metadata', 'IMDS, IPv4-mapped'],
  ['https://[64:ff9b::a9fe:a9fe]/', 'metadata', 'IMDS via NAT64'],
  ['https://metadata.google.internal/computeMetadata/v1/', 'metadata', 'GCP metadata name'],
  ['https://METADATA.google.internal./', 'metadata', 'GCP metadata name, odd spelling'],
  ['https://100.100.100.200/', 'metadata', 'Alibaba metadata'],
  ['https://168.63.129.16/', 'metadata', 'Azure wireserver, a public address'],
  ['https://meta.example.com/', 'metadata', 'a name resolving to IMDS'],
  // names resolving to private ranges (fake DNS)
  ['https://internal.example.com/', 'private_address', 'name → 10/8'],
  ['https://corp.example.com/', 'private_address', 'name → 172.16/12'],
  ['https://home.example.com/', 'private_address', 'name → 192.168/16'],
  ['https://loop.example.com/', 'private_address', 'name → 127.0.0.1'],
  ['https://nip.example.com/', 'private_address', 'name → 127.0.0.2'],
  ['https://v6loop.example.com/', 'private_address', 'name → ::1'],
  ['https://mapped.example.com/', 'private_address', 'name → ::ffff:10.0.0.1'],
  ['https://cgnat.example.com/', 'private_address', 'name → CGNAT'],
  ['https://ula.example.com/', 'private_address', 'name → unique-local'],
  ['https://zero.example.com/', 'private_address', 'name → 0.0.0.0'],
  ['https://mixed.example.com/', 'private_address', 'one public and one private answer'],
  ['https://nowhere.example.com/', 'unresolvable', 'NXDOMAIN'],
];

describe('checkUrl without an allow-list', () => {
  it('covers at least 40 addresses and tricks', () => {
    expect(table.length).toBeGreaterThanOrEqual(40);
  });

  it.each(table)('%s → %s (%s)', async (url, expected) => {
    const verdict = await checkUrl(url, policy);
    expect(verdict.kind === 'allowed' ? 'allowed' : verdict.reason).toBe(expected);
  });
});

const listedTable: Row[] = [
  ['http://127.0.0.1:8080/hook', 'allowed', 'a listed IP over plain http'],
  ['http://2130706433:8080/hook', 'allowed', 'the listed IP in decimal'],
  ['https://127.0.0.2/', 'private_address', 'a neighbour of the listed IP'],
  ['http://10.1.2.3/', 'allowed', 'inside the listed subnet'],
  ['https://[::ffff:10.1.2.3]/', 'allowed', 'inside the listed subnet, IPv4-mapped'],
  ['https://10.1.3.1/', 'private_address', 'outside the listed subnet'],
  ['https://partner.example.com/', 'allowed', 'a name resolving into the listed subnet'],
  ['http://partner.example.com/', 'https_required', 'that name over http: only listed hosts may'],
  ['http://ntfy.internal/', 'allowed', 'a listed name over http to its private address'],
  ['https://NTFY.internal./', 'allowed', 'the listed name, odd spelling'],
  ['http://ntfy.internal:25/', 'allowed', 'a listed name may use any port'],
  ['http://api.svc.internal/', 'allowed', 'a name under a listed wildcard'],
  ['https://svc.internal.evil.example/', 'unresolvable', 'the wildcard is a suffix, not a substring'],
  ['http://hooks.example.com/', 'https_required', 'an unlisted public name over http'],
  ['https://localhost/', 'private_address', 'localhost is not 127.0.0.1 by name'],
  ['https://169.254.169.254/', 'metadata', 'metadata stays shut'],
];

describe('checkUrl with egress.allow', () => {
  it.each(listedTable)('%s → %s (%s)', async (url, expected) => {
    const verdict = await checkUrl(url, listed);
    expect(verdict.kind === 'allowed' ? 'allowed' : verdict.reason).toBe(expected);
  });

  it('keeps metadata shut even when its whole subnet is listed', async () => {
    const wide = compileEgressPolicy(['169.254.0.0/16', '0.0.0.0/0'], { resolve });
    expect((await checkUrl('https://169.254.1.1/', wide)).kind).toBe('allowed');
    expect(await checkUrl('https://169.254.169.254/', wide)).toMatchObject({
      kind: 'blocked',
      reason: 'metadata',
    });
  });

  it('allows plain http to a name only when the policy is relaxed for tests', async () => {
    const relaxed = compileEgressPolicy([], { resolve, httpsOnly: false });
    expect((await checkUrl('http://hooks.example.com/', relaxed)).kind).toBe('allowed');
    expect(await checkUrl('http://loop.example.com/', relaxed)).toMatchObject({ reason: 'private_address' });
  });
});

describe('checkUrl results', () => {
  it('returns the resolved address and the normalized URL', async () => {
    const verdict = await checkUrl('https://HOOKS.example.com./in?x=1', policy);
    expect(verdict).toMatchObject({
      kind: 'allowed',
      host: 'hooks.example.com',
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('never puts the path or query (where chat tokens live) into the detail', async () => {
    const verdict = await checkUrl('https://loop.example.com/bot123:SECRET/sendMessage?token=SECRET', policy);
    expect(verdict.kind).toBe('blocked');
    if (verdict.kind === 'blocked') {
      expect(verdict.detail).not.toContain('SECRET');
      expect(verdict.detail).toContain('127.0.0.1');
    }
  });

  it('says which range a private address is in', async () => {
    const verdict = await checkUrl('https://[::ffff:127.0.0.1]/', policy);
    expect(verdict).toMatchObject({ kind: 'blocked', reason: 'private_address' });
    if (verdict.kind === 'blocked') expect(verdict.detail).toContain('loopback');
  });
});

describe('egress.allow entries', () => {
  it('accepts IPs, subnets, names and wildcards', () => {
    expect(
      egressAllowProblems(['127.0.0.1', '10.1.2.0/24', 'ntfy.internal', '*.svc.internal', '::1', 'fd00::/8']),
    ).toEqual([]);
  });

  it('names each bad entry with its index', () => {
    const problems = egressAllowProblems(['10.0.0.0/33', '', 'bad host name']);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain('egress.allow[0]');
    expect(() => compileEgressPolicy(['10.0.0.0/33'])).toThrow(TypeError);
  });

  it('normalizes legacy IPv4 spellings in entries the way URLs are', async () => {
    const p = compileEgressPolicy(['0x7f.1'], { resolve });
    expect((await checkUrl('http://127.0.0.1/', p)).kind).toBe('allowed');
  });
});

describe('classifyAddress', () => {
  it('treats text that is not an address as private (fail closed)', () => {
    expect(classifyAddress('0x7f.1')).toMatchObject({ kind: 'private', range: 'invalid' });
  });

  it('judges a Teredo address by both the IPv4 addresses it carries', () => {
    // server 65.54.227.120 (public); client bits 0x3f57:fefe inverted → 192.168.1.1
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:3f57:fefe')).toMatchObject({ kind: 'private' });
  });

  it('strips brackets and trailing dots when comparing hosts', () => {
    expect(normalizeHost('[::1]')).toBe('::1');
    expect(normalizeHost('Example.COM.')).toBe('example.com');
  });
});
