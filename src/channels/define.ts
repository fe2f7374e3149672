import type { ChannelKind, HttpResponse, SendResult } from './channel.js';
import { classifyStatus, providerText, sendHttp } from './http.js';

/**
 * Everything an HTTP channel kind says about itself: what it renders, how it reads the answer.
 * Sending is the same for all of them (format → one guarded POST → parseResult), so it is not part
 * of the description.
 */
export type HttpChannelSpec<C> = Omit<ChannelKind<C>, 'send'>;

/** The channel kind of an HTTP provider: its description plus the one shared `send`. */
export function defineHttpChannel<C>(spec: HttpChannelSpec<C>): ChannelKind<C> {
  return { ...spec, send: (msg, config, deps) => sendHttp(spec, msg, config, deps) };
}

/**
 * `parseResult` of a kind with a `verdict`: the verdict, else the status; a 2xx the verdict does not
 * recognise is not the provider's answer (a captive portal, a proxy page), so it is dead.
 */
export function resultFromVerdict(
  verdict: (res: HttpResponse) => SendResult | undefined,
  notAnswer: string,
): (res: HttpResponse) => SendResult {
  return (res) =>
    verdict(res) ??
    classifyStatus(res) ?? { kind: 'dead', reason: `${notAnswer}: ${providerText(res.body)}` };
}
