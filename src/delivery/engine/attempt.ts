import type {
  AnyChannelKind,
  SendResult as ChannelResult,
  HttpPost,
  SmtpTransport,
} from '../../channels/index.js';
import type { Egress, SendResult } from '../../egress/index.js';
import type { Message } from '../../notify/port.js';
import { inSpan, withTraceHeaders } from '../../trace/span.js';
import { classify, nextAttemptAt, type Outcome, type RetryPolicy, type Verdict } from '../retry.js';

/**
 * One attempt of one delivery: the channel renders and sends through egress's `post`, which the
 * engine injects with the attempt's budget and an observer. The observer keeps the raw result
 * (`sent`, status, headers), so the engine — not the channel — classifies transport failures: only
 * the raw result knows whether a timeout came before or after the request went out. The channel
 * decides what only it can read, on an answer of any status: a 2xx whose body says the provider
 * refused (`{"ok":false}`), a business code sent with a 4xx (Feishu's 230020 with HTTP 400), a retry
 * hint in a body or a provider header. Where it has no opinion the status rules of `classify` stand.
 */

export interface AttemptDeps {
  egress: Pick<Egress, 'post'>;
  policy: RetryPolicy;
  timeoutMs: number;
  maxResponseBytes: number;
  now: () => number;
  secret: (env: string) => string | undefined;
  /** The email channel's transport; the engine passes one bound to the same egress policy. */
  smtp?: SmtpTransport;
  random?: () => number;
}

export interface AttemptResult {
  /** The raw HTTP attempt; a synthetic one when the channel never reached `post` (config error, SMTP). */
  result: SendResult;
  outcome: Outcome;
  /** The provider's id of what it posted (Telegram message_id, Slack ts), when the channel read one. */
  providerId?: string;
}

/** Egress's post under the attempt's budget, keeping the raw result of the last request in `sink`. */
function attemptPost(deps: AttemptDeps, sink: { last?: SendResult }): HttpPost {
  const limits = { maxTimeoutMs: deps.timeoutMs, maxResponseBytes: deps.maxResponseBytes };
  const onResult = (r: SendResult) => {
    sink.last = r;
  };
  // The trace goes out with the request (W3C `traceparent`), for a receiver that traces too.
  return (req) =>
    deps.egress.post({ ...req, headers: withTraceHeaders(req.headers ?? {}) }, { ...limits, onResult });
}

/** The channel's verdict when no answer came back (a missing secret, SMTP), as an outcome. */
function unansweredVerdict(verdict: ChannelResult, attempt: number, deps: AttemptDeps): Outcome {
  switch (verdict.kind) {
    case 'ok':
      return { kind: 'ok' };
    case 'dead':
      return { kind: 'dead', reason: verdict.reason };
    case 'retry': {
      const at = nextAttemptAt(
        deps.policy,
        attempt,
        deps.now(),
        deps.random ?? Math.random,
        verdict.retryAfterMs,
      );
      if (at === undefined)
        return { kind: 'dead', reason: `exhausted after ${attempt} attempts: ${verdict.error}` };
      return { kind: 'retry', at, error: verdict.error };
    }
  }
}

/**
 * What the channel says about the last answer. On a 2xx, `send()`'s verdict. Otherwise the kind's
 * `verdict` says whether the channel has an opinion at all; when it has, `send()`'s own failure is
 * that reading with the step named (Feishu: the token request or the message), so it is preferred.
 */
function channelReading(
  kind: Pick<AnyChannelKind, 'verdict'>,
  sent: ChannelResult,
  r: SendResult & { status: number },
): Verdict | undefined {
  if (r.status >= 200 && r.status < 300) return sent;
  const opinion = kind.verdict?.({ status: r.status, headers: r.headers ?? {}, body: r.body ?? '' }) as
    | ChannelResult
    | undefined;
  if (opinion === undefined || opinion.kind === 'ok') return undefined;
  return sent.kind === 'ok' ? opinion : sent;
}

export async function attemptDelivery(
  kind: Pick<AnyChannelKind, 'send' | 'verdict'>,
  config: unknown,
  message: Message,
  attempt: number,
  deps: AttemptDeps,
): Promise<AttemptResult> {
  const sink: { last?: SendResult } = {};
  const started = deps.now();
  let verdict: ChannelResult;
  try {
    verdict = (await inSpan('channel.send', { 'switchboard.message_kind': message.kind }, () =>
      kind.send(message, config, {
        post: attemptPost(deps, sink),
        now: deps.now,
        secret: deps.secret,
        ...(deps.smtp ? { smtp: deps.smtp } : {}),
      }),
    )) as ChannelResult;
  } catch (err) {
    // A channel must not throw; if one does, it is a bug that no retry fixes.
    verdict = { kind: 'dead', reason: `channel failed: ${(err as Error).name}` };
  }
  const raw = sink.last;
  const provider = verdict.kind === 'ok' && verdict.providerId ? { providerId: verdict.providerId } : {};
  if (!raw) {
    // Never reached the network (a missing secret, a refused SMTP target, or SMTP itself).
    const result: SendResult = { sent: verdict.kind === 'ok', durationMs: deps.now() - started };
    const outcome = unansweredVerdict(verdict, attempt, deps);
    return { result, outcome, ...provider };
  }
  const outcome = classify(raw, {
    attempt,
    now: deps.now(),
    policy: deps.policy,
    ...(deps.random ? { random: deps.random } : {}),
    inspect: (r) => channelReading(kind, verdict, r),
  });
  return { result: raw, outcome, ...provider };
}
