import { isIP } from 'node:net';
import type { CoreConfig } from '../config/schema.js';
import { AppError } from '../errors/index.js';
import { truncate } from '../text/index.js';

/**
 * Host and Origin validation, for every route: the defence against DNS rebinding (a page on
 * `evil.example` whose name is made to resolve to 127.0.0.1 reaches the gateway with `Host:
 * evil.example`; the MCP TypeScript SDK's advisory GHSA-w48q-cv73-mx4w) and against a page of another
 * site calling the gateway from a browser (`Origin:` of that site).
 *
 * A Host is accepted when its name is `localhost` (or under `.localhost`, which browsers resolve to
 * loopback themselves), an IP address (a rebinding attack always carries a name: a page that asks
 * for an address is a plain cross-site request, which the Origin rule refuses), the listen address
 * (`server.host`), the host of `server.public_url`, or one of `server.allowed_hosts` (`name`,
 * `*.suffix`, or `*` for any). An Origin, when a browser sends one, is accepted when it is this
 * request's own origin, the origin of `server.public_url`, or its host is in `server.allowed_hosts`.
 * `Origin: null` says nothing and passes: our own pages send it, since they are served with
 * `Referrer-Policy: no-referrer` (src/web/page.ts), which makes a browser hide the origin of a form
 * post. No route takes a credential a browser adds by itself (keys are bearer headers, links carry
 * their token), so the Host rule, not Origin, is what stops rebinding.
 * origin.test.ts pins each case; docs/security.md says what it covers.
 */
export interface HostPolicy {
  /** The refusal for this request, or undefined when it may proceed. */
  check(host: string | undefined, origin: string | undefined): AppError | undefined;
}

type ServerConfig = Pick<CoreConfig['server'], 'host' | 'public_url' | 'allowed_hosts'>;

const WILDCARD_LISTEN = new Set(['', '0.0.0.0', '::', '[::]']);
const SHOWN_MAX = 100;

export function hostPolicy(server: ServerConfig): HostPolicy {
  const entries = server.allowed_hosts.map((h) => normalize(h));
  const any = entries.includes('*');
  const suffixes = entries.filter((e) => e.startsWith('*.')).map((e) => e.slice(1));
  const names = new Set(entries.filter((e) => !e.startsWith('*')));
  const listen = normalize(server.host);
  if (!WILDCARD_LISTEN.has(listen)) names.add(listen);
  const publicUrl = server.public_url ? new URL(server.public_url) : undefined;
  if (publicUrl) names.add(normalize(publicUrl.hostname));

  const listed = (name: string) => any || names.has(name) || suffixes.some((s) => name.endsWith(s));
  const hostAllowed = (name: string) =>
    listed(name) || name === 'localhost' || name.endsWith('.localhost') || isIP(unbracket(name)) !== 0;

  return {
    check(rawHost, origin) {
      // No Host header at all is no browser (every browser sends one; Node refuses HTTP/1.1 without
      // it): an HTTP/1.0 client, or app.request() in-process. Nothing to rebind.
      const host = rawHost?.trim().toLowerCase();
      const at = host === undefined ? undefined : hostOf(host);
      if (host !== undefined && (at === undefined || !hostAllowed(normalize(at.hostname)))) {
        return new AppError(
          'host_not_allowed',
          `this gateway does not answer for Host ${show(host ?? '')} (DNS rebinding protection): if that is the name people and agents use to reach it, set server.public_url to its URL or add the name to server.allowed_hosts`,
        );
      }
      if (origin === undefined || origin === 'null' || any) return undefined;
      const from = originOf(origin);
      const same =
        from !== undefined &&
        (from.host === at?.host ||
          (publicUrl !== undefined && from.origin === publicUrl.origin) ||
          listed(normalize(from.hostname)));
      if (same) return undefined;
      return new AppError(
        'origin_not_allowed',
        `a browser page from ${show(origin)} may not call this gateway: only its own origin or server.public_url may; to let that site in, add its host name to server.allowed_hosts`,
      );
    },
  };
}

/** `Example.COM.` → `example.com`; `[::1]` stays bracketed, as it appears in a Host header. */
function normalize(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

const unbracket = (name: string) => (name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name);

/** A Host header as a URL's host (`a.example:8787`, `[::1]`); undefined when it is not a bare host[:port]. */
function hostOf(host: string): URL | undefined {
  if (host === '' || /[/?#@\\\s]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}/`);
  } catch {
    return undefined;
  }
}

function originOf(origin: string): URL | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

const show = (value: string) => JSON.stringify(truncate(value, SHOWN_MAX));
