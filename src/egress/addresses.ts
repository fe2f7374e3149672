import ipaddr from 'ipaddr.js';

/**
 * Classifies one IP address for the SSRF guard. Only global unicast is `public`; every special-use
 * range (loopback, RFC 1918, link-local, CGNAT, multicast, reserved, documentation, unique-local…)
 * is `private`, and cloud metadata endpoints are their own class because no allow-list entry may
 * open them. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are
 * judged by the IPv4 address they carry: `::ffff:127.0.0.1` is loopback, not "some IPv6".
 * Pinned by the table in `ssrf.test.ts`.
 */
export type AddressClass =
  | { kind: 'public'; address: string }
  | { kind: 'private'; address: string; range: string }
  | { kind: 'metadata'; address: string };

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Instance metadata services. They sit in ranges that are blocked anyway, except Azure's wireserver,
 * which is a public address; listing them by name keeps them shut even when an operator allow-lists
 * a whole subnet such as 169.254.0.0/16 or 100.64.0.0/10.
 */
export const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle (IMDS)
  '169.254.170.2', // AWS ECS task metadata and credentials
  '169.254.170.23', // AWS EKS pod identity agent
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure wireserver (a public address)
  '192.0.0.192', // Oracle Cloud (legacy)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS pod identity over IPv6
];

/** Host names that reach a metadata service through the platform's resolver. */
export const METADATA_HOSTNAMES: readonly string[] = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
];

const metadataSet = new Set(METADATA_ADDRESSES.map((a) => ipaddr.parse(a).toNormalizedString()));

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
const NAT64_LOCAL = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

/** Parses a textual address (no brackets, no zone) or returns undefined. */
export function parseAddress(text: string): Ip | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // ipaddr.isValid accepts legacy forms like "0x7f.1"; a resolved or URL-normalized address is never
  // in those forms, so strict four-part decimal (or IPv6) is required here.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare) && !bare.includes('%')) return ipaddr.IPv6.parse(bare);
  return undefined;
}

/** An IPv4-mapped IPv6 address as its IPv4 address, so subnet allow-lists written in IPv4 match it. */
export function canonicalAddress(ip: Ip): Ip {
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    return (ip as ipaddr.IPv6).toIPv4Address();
  return ip;
}

function v4FromParts(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function classifyV4(ip: ipaddr.IPv4, text: string): AddressClass {
  if (metadataSet.has(ip.toNormalizedString())) return { kind: 'metadata', address: text };
  const range = ip.range();
  return range === 'unicast' ? { kind: 'public', address: text } : { kind: 'private', address: text, range };
}

/** The IPv4 address an IPv6 address carries, and the name of the carrying scheme, if any. */
function embeddedV4(ip: ipaddr.IPv6): { via: string; v4: ipaddr.IPv4[] } | undefined {
  const p = ip.parts as [number, number, number, number, number, number, number, number];
  if (ip.isIPv4MappedAddress()) return { via: 'ipv4Mapped', v4: [v4FromParts(p[6], p[7])] };
  switch (ip.range()) {
    case 'rfc6145':
      return { via: 'ipv4Translated', v4: [v4FromParts(p[6], p[7])] };
    case 'rfc6052':
      return ip.match(NAT64_LOCAL) ? undefined : { via: 'nat64', v4: [v4FromParts(p[6], p[7])] };
    case '6to4':
      return { via: '6to4', v4: [v4FromParts(p[1], p[2])] };
    case 'teredo':
      // RFC 4380: the server's address in clear, the client's public address with every bit inverted.
      return { via: 'teredo', v4: [v4FromParts(p[2], p[3]), v4FromParts(p[6] ^ 0xffff, p[7] ^ 0xffff)] };
    default:
      return undefined;
  }
}

function classifyV6(ip: ipaddr.IPv6, text: string): AddressClass {
  if (metadataSet.has(ip.toNormalizedString())) return { kind: 'metadata', address: text };
  const embedded = embeddedV4(ip);
  if (embedded) {
    for (const v4 of embedded.v4) {
      const inner = classifyV4(v4, text);
      if (inner.kind === 'metadata') return inner;
      if (inner.kind === 'private')
        return { ...inner, range: `${embedded.via}(${v4.toString()} ${inner.range})` };
    }
    return { kind: 'public', address: text };
  }
  const range = ip.range();
  if (range !== 'unicast') return { kind: 'private', address: text, range };
  // Deprecated IPv4-compatible addresses (::a.b.c.d) are not in ipaddr's table but are not routable.
  if (ip.match(IPV4_COMPATIBLE)) return { kind: 'private', address: text, range: 'ipv4Compatible' };
  // Only 2000::/3 is allocated for global unicast; anything else is unassigned.
  if (!ip.match(GLOBAL_UNICAST_V6)) return { kind: 'private', address: text, range: 'unassigned' };
  return { kind: 'public', address: text };
}

/** Classifies an address; text that is not an address is `private` with range `invalid` (fail closed). */
export function classifyAddress(text: string): AddressClass {
  const ip = parseAddress(text);
  if (!ip) return { kind: 'private', address: text, range: 'invalid' };
  return ip.kind() === 'ipv4' ? classifyV4(ip as ipaddr.IPv4, text) : classifyV6(ip as ipaddr.IPv6, text);
}
