import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { METADATA_HOSTNAMES, canonicalAddress, classifyAddress, parseAddress } from './addresses.js';

/**
 * The SSRF guard: decides whether Switchboard may send to a URL. `checkUrl` is the early check (it
 * gives a clean reason for the "blocked" event); `createGuardedDispatcher` in `dispatcher.ts` applies
 * the same rules again at connect time to the address actually dialled, which is what stops DNS
 * rebinding. Details never contain the URL's path or query: chat APIs carry tokens there.
 */

export type BlockReason =
  | 'invalid_url'
  | 'scheme'
  | 'userinfo'
  | 'port'
  | 'https_required'
  | 'private_address'
  | 'metadata'
  | 'unresolvable';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address the system would dial. Injected in tests. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface EgressPolicy {
  /** Exact host names from `egress.allow` (lower case, no trailing dot). */
  readonly hosts: ReadonlySet<string>;
  /** `*.example.internal` entries, stored as `.example.internal`. */
  readonly suffixes: readonly string[];
  /** IP and CIDR entries; a bare IP is a /32 or /128. */
  readonly nets: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
  /** Plain HTTP only to listed targets. Off only in tests that need a name on 127.0.0.1. */
  readonly httpsOnly: boolean;
  readonly resolve: Resolver;
}

export type UrlCheck =
  | { kind: 'allowed'; url: URL; host: string; address: string; family: 4 | 6; addresses: ResolvedAddress[] }
  | { kind: 'blocked'; reason: BlockReason; detail: string };

export type Blocked = Extract<UrlCheck, { kind: 'blocked' }>;

/** Thrown by the guarded dispatcher's connector; `send.ts` turns it into `error: 'blocked'`. */
export class EgressBlockedError extends Error {
  readonly code = 'ERR_EGRESS_BLOCKED';
  readonly reason: BlockReason;
  readonly detail: string;
  constructor(blocked: Blocked) {
    super(`egress blocked (${blocked.reason}): ${blocked.detail}`);
    this.name = 'EgressBlockedError';
    this.reason = blocked.reason;
    this.detail = blocked.detail;
  }
}

/**
 * Ports browsers refuse to fetch from (WHATWG Fetch "bad port"), plus 0. A webhook to :25 or :6379
 * is a protocol-smuggling attempt, not a webhook; a listed host may still use them.
 */
export const BAD_PORTS: ReadonlySet<number> = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Lower-cases a host and drops IPv6 brackets and a trailing dot, as the guard compares hosts. */
export function normalizeHost(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

type AllowEntry =
  | { kind: 'net'; net: [ipaddr.IPv4 | ipaddr.IPv6, number] }
  | { kind: 'host'; host: string }
  | { kind: 'suffix'; suffix: string };

function parseAllowEntry(raw: string): AllowEntry | string {
  const entry = raw.trim();
  if (entry === '') return 'is empty';
  if (entry.includes('/')) {
    if (!ipaddr.isValidCIDR(entry)) return 'is not a valid CIDR subnet (like "10.1.2.0/24")';
    const [ip, bits] = ipaddr.parseCIDR(entry);
    const v4 = canonicalAddress(ip);
    // "::ffff:10.0.0.0/104" means 10.0.0.0/8: addresses are compared in their IPv4 form.
    if (v4 !== ip && bits >= 96) return { kind: 'net', net: [v4, bits - 96] };
    return { kind: 'net', net: [ip, bits] };
  }
  const literal = parseAddress(entry);
  if (literal) {
    const ip = canonicalAddress(literal);
    return { kind: 'net', net: [ip, ip.kind() === 'ipv4' ? 32 : 128] };
  }
  const wildcard = entry.startsWith('*.');
  let host: string;
  try {
    // The URL parser normalizes the name exactly as it will when the entry is used (IDN, case, 0x7f.1).
    host = normalizeHost(new URL(`http://${wildcard ? entry.slice(2) : entry}/`).hostname);
  } catch {
    return 'is neither an IP address, a CIDR subnet nor a host name';
  }
  const asIp = parseAddress(host);
  if (asIp && !wildcard)
    return { kind: 'net', net: [canonicalAddress(asIp), asIp.kind() === 'ipv4' ? 32 : 128] };
  return wildcard ? { kind: 'suffix', suffix: `.${host}` } : { kind: 'host', host };
}

/** One line per invalid `egress.allow` entry, for the config loader. Empty when all are valid. */
export function egressAllowProblems(allow: readonly string[]): string[] {
  const problems: string[] = [];
  allow.forEach((raw, i) => {
    const parsed = parseAllowEntry(raw);
    if (typeof parsed === 'string') problems.push(`egress.allow[${i}] "${raw}" ${parsed}`);
  });
  return problems;
}

/** Builds the policy from `egress.allow`. Throws a TypeError naming the first bad entry. */
export function compileEgressPolicy(
  allow: readonly string[],
  options: { httpsOnly?: boolean; resolve?: Resolver } = {},
): EgressPolicy {
  const problems = egressAllowProblems(allow);
  if (problems.length > 0) throw new TypeError(problems.join('; '));
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const nets: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const raw of allow) {
    const e = parseAllowEntry(raw) as AllowEntry;
    if (e.kind === 'net') nets.push(e.net);
    else if (e.kind === 'host') hosts.add(e.host);
    else suffixes.push(e.suffix);
  }
  return {
    hosts,
    suffixes,
    nets,
    httpsOnly: options.httpsOnly ?? true,
    resolve: options.resolve ?? systemResolver,
  };
}

function hostListed(host: string, policy: EgressPolicy): boolean {
  return policy.hosts.has(host) || policy.suffixes.some((s) => host.endsWith(s));
}

function inListedNet(address: string, policy: EgressPolicy): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  const ip = canonicalAddress(parsed);
  return policy.nets.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

function blocked(reason: BlockReason, detail: string): Blocked {
  return { kind: 'blocked', reason, detail };
}

/**
 * Judges one address the host resolved to (or the literal in the URL). Metadata is refused even when
 * listed; a private address passes when its host name is listed or it lies in a listed subnet.
 */
export function checkAddress(address: string, host: string, policy: EgressPolicy): Blocked | undefined {
  const cls = classifyAddress(address);
  const shown = host === address ? address : `${host} resolves to ${address}`;
  if (cls.kind === 'metadata') return blocked('metadata', `${shown}, a cloud metadata address`);
  if (cls.kind === 'public') return undefined;
  if (hostListed(host, policy) || inListedNet(address, policy)) return undefined;
  return blocked('private_address', `${shown} (${cls.range}), not in egress.allow`);
}

export interface Target {
  protocol: string;
  hostname: string;
  /** Empty string for the scheme's default port, as in `URL.port`. */
  port: string;
}

/**
 * Everything that can be decided without DNS: scheme, port, plain HTTP, metadata names, localhost,
 * and IP literals. Used by `checkUrl` and again by the guarded connector for every connection.
 */
export function checkTarget(
  target: Target,
  policy: EgressPolicy,
): Blocked | { kind: 'name' | 'literal'; host: string } {
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return blocked('scheme', `scheme ${target.protocol} is not http or https`);
  }
  const host = normalizeHost(target.hostname);
  if (METADATA_HOSTNAMES.includes(host)) return blocked('metadata', `${host} is a cloud metadata host name`);
  const literal = parseAddress(host) !== undefined;
  const listed = hostListed(host, policy) || (literal && inListedNet(host, policy));
  const port = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : Number(target.port);
  if (BAD_PORTS.has(port) && !listed) return blocked('port', `port ${port} is refused for ${host}`);
  if (target.protocol === 'http:' && policy.httpsOnly && !listed) {
    return blocked('https_required', `plain http to ${host} needs the host in egress.allow`);
  }
  if (literal) {
    const verdict = checkAddress(host, host, policy);
    return verdict ?? { kind: 'literal', host };
  }
  // WHATWG URL: "localhost" and "*.localhost" always mean this machine, whatever DNS says.
  if ((host === 'localhost' || host.endsWith('.localhost')) && !hostListed(host, policy)) {
    return blocked('private_address', `${host} is this machine, not in egress.allow`);
  }
  return { kind: 'name', host };
}

/** Resolves a name and judges every answer; one refused answer refuses the name (the dialler may pick any). */
export async function resolveChecked(
  host: string,
  policy: EgressPolicy,
): Promise<Blocked | { kind: 'resolved'; addresses: ResolvedAddress[] }> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return blocked('unresolvable', `${host} does not resolve${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  if (addresses.length === 0) return blocked('unresolvable', `${host} has no addresses`);
  for (const a of addresses) {
    const verdict = checkAddress(a.address, host, policy);
    if (verdict) return verdict;
  }
  return { kind: 'resolved', addresses };
}

export type StaticCheck = Blocked | { kind: 'name' | 'literal'; url: URL; host: string };

/**
 * Everything about a URL that needs no DNS: it parses, its scheme is http or https, it carries no
 * user info, and `checkTarget` passes (port, plain HTTP, metadata names, localhost, IP literals). Cheap
 * and synchronous, so it runs where a lookup cannot: at config load, inside the enqueueing transaction,
 * and before every send. A name that only DNS shows to be private is left to `checkUrl` and the
 * connect-time check.
 */
export function checkUrlStatic(input: string | URL, policy: EgressPolicy): StaticCheck {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return blocked('invalid_url', 'not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return blocked('scheme', `scheme ${url.protocol} is not http or https`);
  }
  if (url.username !== '' || url.password !== '') {
    return blocked('userinfo', `credentials in the URL of ${normalizeHost(url.hostname)} are refused`);
  }
  const target = checkTarget(url, policy);
  if (target.kind === 'blocked') return target;
  return { kind: target.kind, url, host: target.host };
}

/**
 * Parses, normalizes (Node's WHATWG parser turns 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 into
 * 127.0.0.1), and resolves a URL, and says whether Switchboard may send to it.
 */
export async function checkUrl(input: string | URL, policy: EgressPolicy): Promise<UrlCheck> {
  const target = checkUrlStatic(input, policy);
  if (target.kind === 'blocked') return target;
  const { url } = target;
  if (target.kind === 'literal') {
    const family = parseAddress(target.host)?.kind() === 'ipv6' ? 6 : 4;
    const address = target.host;
    return { kind: 'allowed', url, host: target.host, address, family, addresses: [{ address, family }] };
  }
  const resolved = await resolveChecked(target.host, policy);
  if (resolved.kind === 'blocked') return resolved;
  const first = resolved.addresses[0]!;
  return {
    kind: 'allowed',
    url,
    host: target.host,
    address: first.address,
    family: first.family,
    addresses: resolved.addresses,
  };
}
