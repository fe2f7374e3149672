import type { LookupAddress, LookupOptions } from 'node:dns';
import type { buildConnector, Dispatcher } from 'undici';
import { EgressBlockedError, type EgressPolicy, checkTarget, resolveChecked } from './ssrf.js';
import { undici } from './undici.js';

/**
 * An undici Agent that applies the SSRF policy at connect time, to the address it actually dials:
 * the connector refuses a blocked scheme, port or IP literal before opening a socket, and its DNS
 * lookup refuses a name whose answers include a blocked address. A name that resolved to a public
 * address during `checkUrl` and to 127.0.0.1 now (DNS rebinding) is caught here. The Agent never
 * follows redirects: undici's core does not, and no redirect interceptor is composed, so a 3xx comes
 * back to `send.ts` as a result (`dispatcher.test.ts` pins both).
 */

/** Connection set-up (TCP + TLS) budget; the whole attempt's budget is `sendOnce`'s timeout. */
export const CONNECT_TIMEOUT_MS = 10_000; // undici's own default; a receiver slower than this is down.

/** Idle keep-alive sockets per origin are reused: one handshake per burst, not per delivery. */
export const KEEP_ALIVE_TIMEOUT_MS = 4_000; // below the common 5 s server default, so we close first.

export interface GuardedDispatcherOptions {
  connectTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** Sockets per origin; undefined means undici's default (no limit). */
  connections?: number;
  /** Extra TLS options (a test CA); never used to disable verification. */
  tls?: { ca?: string | Buffer | Array<string | Buffer> };
  /**
   * Opens the sockets under the guard, from the options the guard built (its checked `lookup`
   * among them); undici's `buildConnector` by default. Tests pass `loopbackOnly` (`testing.ts`) so
   * that no packet can leave for a private or metadata address even if the guard were broken.
   */
  dial?: Dial;
}

/** The socket layer below the guard: build options in, an undici connector out. */
export type Dial = (options: buildConnector.BuildOptions) => buildConnector.connector;

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

function guardedLookup(policy: EgressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveChecked(hostname, policy).then(
      (verdict) => {
        if (verdict.kind === 'blocked') {
          callback(new EgressBlockedError(verdict), '', 0);
          return;
        }
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = verdict.addresses.filter((a) => wanted === undefined || a.family === wanted);
        const first = addresses[0];
        if (!first) {
          const err = new Error(`${hostname} has no IPv${wanted} address`) as NodeJS.ErrnoException;
          err.code = 'ENOTFOUND';
          callback(err, '', 0);
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

export function createGuardedDispatcher(
  policy: EgressPolicy,
  options: GuardedDispatcherOptions = {},
): Dispatcher {
  const { Agent, buildConnector } = undici();
  const dial = options.dial ?? buildConnector;
  const base = dial({
    timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    lookup: guardedLookup(policy),
    ...(options.tls?.ca !== undefined ? { ca: options.tls.ca } : {}),
  } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    const verdict = checkTarget(
      { protocol: opts.protocol, hostname: opts.hostname, port: opts.port },
      policy,
    );
    if (verdict.kind === 'blocked') {
      callback(new EgressBlockedError(verdict), null);
      return;
    }
    base(opts, callback);
  };
  return new Agent({
    connect,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
  });
}
