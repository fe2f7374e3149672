import { BlockList, isIP } from 'node:net';
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AppEnv } from '../../kernel/module.js';

/**
 * Ingress binding (docs/ingress-sources.md, "Binding"): which addresses may deliver to a source, and
 * which tenant a verified delivery belongs to by the installation, repository or workspace it names.
 */

/** A CIDR (`192.30.252.0/22`, `2a0a:a440::/29`) or a single address; undefined when it is neither. */
export function parseCidr(
  text: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', bits, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const v = isIP(address);
  if (v === 0) return undefined;
  const max = v === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: v === 4 ? 'ipv4' : 'ipv6' };
}

/** A list of CIDRs as one matcher; the config schema has already checked each entry. */
export function addressList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const p = parseCidr(c);
    if (p) list.addSubnet(p.address, p.prefix, p.family);
  }
  return list;
}

export function listed(list: BlockList, address: string): boolean {
  const v = isIP(address);
  if (v === 0) return false;
  // An IPv4 peer on a dual-stack socket reads `::ffff:a.b.c.d`; BlockList matches that against IPv4 ranges.
  return list.check(address, v === 4 ? 'ipv4' : 'ipv6');
}

const unmapped = (a: string) => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a);

/**
 * The sender's address: the socket peer, unless the peer is a trusted proxy (`server.trusted_proxies`),
 * in which case `X-Forwarded-For` is read from the right, skipping trusted proxies, and the first address
 * that is not one is the sender. Without trusted proxies the header is never read: anyone can write it.
 * Undefined when there is no socket (an in-process request) or the header is malformed.
 */
export function senderAddress(c: Context<AppEnv>, trusted: BlockList | undefined): string | undefined {
  let peer: string | undefined;
  try {
    peer = getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
  if (!peer) return undefined;
  peer = unmapped(peer);
  if (!trusted || !listed(trusted, peer)) return peer;
  const forwarded = c.req.header('x-forwarded-for');
  if (!forwarded) return peer;
  const hops = forwarded.split(',').map((h) => unmapped(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return undefined;
    if (!listed(trusted, hop)) return hop;
  }
  return hops[0];
}

/**
 * Binding keys, most specific first: a repository bound on its own wins over its installation or
 * organization. Keys a kind reports beyond these are tried after them, in its order.
 */
const BINDING_ORDER = [
  'repository',
  'project',
  'project_id',
  'installation_id',
  'organization',
  'team_id',
  'enterprise_id',
  'api_app_id',
  'tenant_key',
  'app_id',
  'chat_id',
  'user_id',
];

/** The tenant `sources.<name>.tenants` names for this binding, and by which key; undefined: unbound. */
export function boundTenant(
  binding: Readonly<Record<string, string>>,
  tenants: Readonly<Record<string, string>>,
): { tenant: string; key: string; id: string } | undefined {
  const keys = [...BINDING_ORDER, ...Object.keys(binding).filter((k) => !BINDING_ORDER.includes(k))];
  for (const key of keys) {
    const id = binding[key];
    if (id !== undefined && Object.hasOwn(tenants, id)) return { tenant: tenants[id]!, key, id };
  }
  return undefined;
}
