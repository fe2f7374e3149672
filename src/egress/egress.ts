import type { Dispatcher } from 'undici';
import { parseAddress } from './addresses.js';
import { createGuardedDispatcher, type GuardedDispatcherOptions } from './dispatcher.js';
import { type SendRequest, type SendResult, sendOnce } from './send.js';
import {
  type Blocked,
  type BlockReason,
  type EgressPolicy,
  type ResolvedAddress,
  type Resolver,
  type UrlCheck,
  checkAddress,
  checkUrl,
  checkUrlStatic,
  compileEgressPolicy,
  normalizeHost,
  resolveChecked,
} from './ssrf.js';
import { undici } from './undici.js';

/**
 * The one way Switchboard reaches the network: delivery attempts, channel sends, task `http` actions,
 * ingress re-reads and SMTP hosts all go through an `Egress` built from `egress.allow`. It holds the
 * compiled policy and the guarded dispatcher, and offers the raw attempt (`send`), the post adapter
 * channels and tasks use (`post`), and the connect-time check for a protocol undici does not carry
 * (`resolveHost`, for SMTP).
 */

/**
 * Thrown by `post` and `resolveHost` when the egress policy refuses the target: no retry reaches a
 * blocked address, so a channel maps it to `dead` and a task fails. Its message is secret-free.
 */
export class TargetRefusedError extends Error {
  /** Why the guard refused, when it was the guard (absent for a hand-made refusal in a test). */
  readonly blocked: { reason: BlockReason; detail: string } | undefined;
  constructor(message: string, blocked?: { reason: BlockReason; detail: string }) {
    super(message);
    this.name = 'TargetRefusedError';
    this.blocked = blocked;
  }
}

/** What a channel or a task posts. `timeoutMs` is the caller's; `PostOptions.maxTimeoutMs` caps it. */
export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** POST unless said; PATCH updates a sent message in place (Feishu cards). */
  method?: 'POST' | 'PATCH';
  timeoutMs?: number;
}

export interface PostAnswer {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
}

export interface PostOptions {
  /** A ceiling on the request's own `timeoutMs` (the delivery attempt's budget). */
  maxTimeoutMs?: number;
  maxResponseBytes?: number;
  /**
   * Sees the raw attempt before `post` answers or throws: the delivery engine classifies transport
   * failures from it, because only it knows whether a timeout came before or after the request left.
   */
  onResult?: (result: SendResult) => void;
}

export interface Egress {
  /** `egress.allow`, compiled: the serving one (a reload swaps it). */
  readonly policy: EgressPolicy;
  /** The guarded dispatcher (connect-time check, DNS rebinding caught, no redirects). */
  readonly dispatcher: Dispatcher;
  /**
   * Serves a new `egress.allow` from now on (SIGHUP or an edited config file, `live.ts`): the next
   * check, send and connection use it; pooled connections of the old policy are closed once their
   * requests finish, so a host taken off the list is not reached again over a kept-alive socket.
   * Returns whether the list changed.
   */
  reload(allow: readonly string[]): boolean;
  /** The early check: whether a URL may be reached, with a clean reason; sends nothing. */
  check(url: string | URL): Promise<UrlCheck>;
  /** One attempt through the dispatcher; never throws for network or HTTP failures. */
  send(req: Omit<SendRequest, 'dispatcher'>): Promise<SendResult>;
  /**
   * The post adapter: an answer of any status is returned; a refused target throws
   * `TargetRefusedError`; anything else throws an error whose `code` names the failure.
   */
  post(req: PostRequest, opts?: PostOptions): Promise<PostAnswer>;
  /**
   * For a protocol that dials itself (SMTP): resolves the host, judges every answer and returns the
   * address to connect to, so there is no second lookup an attacker could rebind. Throws
   * `TargetRefusedError` when the policy refuses it.
   */
  resolveHost(host: string): Promise<string>;
  /** Closes the dispatcher when this egress built it. */
  close(): Promise<void>;
}

export interface EgressOptions extends GuardedDispatcherOptions {
  /** `egress.allow`: hosts and subnets that may be reached although private, loopback or plain HTTP. */
  allow: readonly string[];
  /** Plain HTTP only to listed targets (default). Off only in tests that need a name on 127.0.0.1. */
  httpsOnly?: boolean;
  /** DNS; the system resolver by default. Tests inject one so no name is looked up for real. */
  resolve?: Resolver;
  /** Send through this dispatcher instead of a guarded one built here (a test's fake). */
  dispatcher?: Dispatcher;
}

/** A host to dial: an IP literal is judged as it is (DNS would only echo it), a name by every answer. */
async function judgeHost(
  host: string,
  policy: EgressPolicy,
): Promise<Blocked | { kind: 'resolved'; addresses: ResolvedAddress[] }> {
  const bare = normalizeHost(host);
  const literal = parseAddress(bare);
  if (!literal) return resolveChecked(host, policy);
  const family = literal.kind() === 'ipv6' ? 6 : 4;
  return checkAddress(bare, bare, policy) ?? { kind: 'resolved', addresses: [{ address: bare, family }] };
}

/**
 * The dispatcher callers hold while the policy under it is swapped: every request goes to the guarded
 * Agent of the serving policy; a swap lets the old Agent finish what it carries, then closes it. The
 * class is made with the first dispatcher, when undici loads (undici.ts).
 */
interface SwappingDispatcher extends Dispatcher {
  swap(next: Dispatcher): void;
}
let swappingClass: (new (current: Dispatcher) => SwappingDispatcher) | undefined;
const newSwappingDispatcher = (current: Dispatcher): SwappingDispatcher => {
  swappingClass ??= swappingDispatcherClass(undici().Dispatcher);
  return new swappingClass(current);
};

const swappingDispatcherClass = (Base: typeof Dispatcher) =>
  class extends Base {
    constructor(private current: Dispatcher) {
      super();
    }

    swap(next: Dispatcher): void {
      const old = this.current;
      this.current = next;
      old.close().catch(() => {});
    }

    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      return this.current.dispatch(options, handler);
    }

    override close(): Promise<void>;
    override close(callback: () => void): void;
    override close(callback?: () => void): Promise<void> | void {
      const done = this.current.close();
      if (!callback) return done;
      done.then(callback, callback);
    }

    override destroy(): Promise<void>;
    override destroy(err: Error | null): Promise<void>;
    override destroy(callback: () => void): void;
    override destroy(err: Error | null, callback: () => void): void;
    override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
      const err = typeof a === 'function' ? null : (a ?? null);
      const callback = typeof a === 'function' ? a : b;
      const done = this.current.destroy(err);
      if (!callback) return done;
      done.then(callback, callback);
    }
  };

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);

export function createEgress(opts: EgressOptions): Egress {
  const compile = (allow: readonly string[]) =>
    compileEgressPolicy(allow, {
      ...(opts.httpsOnly !== undefined ? { httpsOnly: opts.httpsOnly } : {}),
      ...(opts.resolve ? { resolve: opts.resolve } : {}),
    });
  let allowed = [...opts.allow];
  let policy = compile(allowed);
  const owned = opts.dispatcher === undefined;
  // Built with the first send (undici loads then): an egress that never sends holds no Agent.
  let swapping: SwappingDispatcher | undefined;
  const dispatcher = (): Dispatcher => {
    if (!owned) return opts.dispatcher as Dispatcher;
    swapping ??= newSwappingDispatcher(createGuardedDispatcher(policy, opts));
    return swapping;
  };
  const send = async (req: Omit<SendRequest, 'dispatcher'>): Promise<SendResult> => {
    // The early check before every send: a scheme undici would reject with a bare error (`file:`,
    // `gopher:`) and user info it would silently drop must both be `blocked`, never `other` (which
    // the priority lane retries forever) or a delivery. The dispatcher re-checks at connect time.
    const early = checkUrlStatic(req.url, policy);
    if (early.kind === 'blocked') {
      const blocked = { reason: early.reason, detail: early.detail };
      return {
        sent: false,
        error: 'blocked',
        blocked,
        detail: `${early.reason}: ${early.detail}`,
        durationMs: 0,
      };
    }
    return sendOnce({ ...req, dispatcher: dispatcher() });
  };

  return {
    get policy() {
      return policy;
    },
    get dispatcher() {
      return dispatcher();
    },
    reload(allow) {
      if (sameList(allow, allowed)) return false;
      allowed = [...allow];
      policy = compile(allowed);
      swapping?.swap(createGuardedDispatcher(policy, opts));
      return true;
    },
    check: (url) => checkUrl(url, policy),
    send,
    async post(req, o = {}) {
      const timeoutMs =
        o.maxTimeoutMs === undefined
          ? req.timeoutMs
          : Math.min(req.timeoutMs ?? o.maxTimeoutMs, o.maxTimeoutMs);
      const { url, headers, body, method } = req;
      const r = await send({
        url,
        headers,
        body,
        timeoutMs,
        maxResponseBytes: o.maxResponseBytes,
        ...(method ? { method } : {}),
      });
      o.onResult?.(r);
      if (r.error === 'blocked')
        throw new TargetRefusedError(`egress refused: ${r.detail ?? 'blocked'}`, r.blocked);
      if (r.status !== undefined) return { status: r.status, headers: r.headers ?? {}, body: r.body ?? '' };
      // No answer: the receiver may still have acted when `sent`. Callers retry with the same id.
      throw Object.assign(new Error(`send failed: ${r.error ?? 'other'}`), {
        code: r.detail ?? r.error ?? 'other',
      });
    },
    async resolveHost(host) {
      const verdict = await judgeHost(host, policy);
      if (verdict.kind === 'blocked')
        throw new TargetRefusedError(`egress refused: ${verdict.reason}: ${verdict.detail}`, {
          reason: verdict.reason,
          detail: verdict.detail,
        });
      const first = verdict.addresses[0];
      if (!first) throw new TargetRefusedError(`egress refused: ${host} has no addresses`);
      return first.address;
    },
    async close() {
      await swapping?.close();
    },
  };
}
