import type { Dispatcher } from 'undici';
import { sendOnce } from '../delivery/http.js';
import { type EgressPolicy, resolveChecked } from '../delivery/ssrf.js';
import { type HttpPost, type SmtpTransport, TargetRefusedError } from './channel.js';
import { createSmtpTransport, type SmtpOptions } from './email/smtp.js';

/**
 * The production senders: channels reach the network only through the delivery engine's guarded
 * dispatcher (SSRF policy, `egress.allow`) and, for SMTP, the same egress policy.
 */

/** Adapts `sendOnce` to `HttpPost`: an answer is returned, a refusal is dead, anything else retried. */
export function guardedPost(dispatcher: Dispatcher): HttpPost {
  return async (req) => {
    const sendReq: Parameters<typeof sendOnce>[0] = {
      url: req.url,
      headers: req.headers,
      body: req.body,
      dispatcher,
    };
    if (req.timeoutMs !== undefined) sendReq.timeoutMs = req.timeoutMs;
    const r = await sendOnce(sendReq);
    if (r.error === 'blocked') throw new TargetRefusedError(`egress refused: ${r.detail ?? 'blocked'}`);
    if (r.status !== undefined && r.error === undefined) {
      return { status: r.status, headers: r.headers ?? {}, body: r.body ?? '' };
    }
    // `sent` and no answer: the provider may have acted. The relay retries with the same event id.
    throw Object.assign(new Error(`send failed: ${r.error ?? 'other'}`), {
      code: r.detail ?? r.error ?? 'other',
    });
  };
}

/**
 * An SMTP transport that connects only to an address the egress policy allows. It resolves and
 * checks first, then connects to that very address (no second lookup an attacker could rebind);
 * TLS still verifies the certificate against the configured host name.
 */
export function guardedSmtp(policy: EgressPolicy, options: SmtpOptions = {}): SmtpTransport {
  return createSmtpTransport({
    ...options,
    async resolveHost(host) {
      const verdict = await resolveChecked(host, policy);
      if (verdict.kind === 'blocked')
        throw new TargetRefusedError(`egress refused: ${verdict.reason}: ${verdict.detail}`);
      const first = verdict.addresses[0];
      if (!first) throw new TargetRefusedError(`egress refused: ${host} has no addresses`);
      return first.address;
    },
  });
}
