import type { z } from 'zod';
import type { PostAnswer, PostRequest } from '../egress/index.js';
import type { Message } from '../notify/port.js';

/** A channel's request and the provider's answer are egress's post shapes (`src/egress/egress.ts`). */
export type HttpRequest = PostRequest;
export type HttpResponse = PostAnswer;

/** The one way a channel reaches the network; the delivery engine injects egress's guarded `post`. */
export type HttpPost = (req: HttpRequest) => Promise<HttpResponse>;

/** HTTP 200 is not delivery: every channel maps the provider's business result onto this. */
export type SendResult =
  | { kind: 'ok'; providerId?: string }
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  | { kind: 'dead'; reason: string };

/** What `format` may read besides the message and config; all of it injected so format stays pure. */
export interface FormatContext {
  /** Milliseconds since the epoch (signatures that include a timestamp). */
  now: number;
  /** Looks up a secret by its env name (`token_env`, `secret_env`, …). */
  secret: (env: string) => string | undefined;
}

export interface SendDeps {
  post: HttpPost;
  now: () => number;
  secret: (env: string) => string | undefined;
  /** Only the email channel uses it; defaults to the built-in client over node:net. */
  smtp?: SmtpTransport;
}

export interface SmtpMail {
  host: string;
  port: number;
  from: string;
  to: string[];
  /** The full RFC 5322 message, CRLF line endings, not yet dot-stuffed. */
  data: string;
  starttls: 'never' | 'if-offered' | 'required';
  heloName: string;
  /** Env names only: the transport resolves them, so the rendered mail never holds a password. */
  usernameEnv?: string;
  passwordEnv?: string;
}

export interface SmtpReply {
  code: number;
  text: string;
}

export type SmtpTransport = (
  mail: SmtpMail,
  secret: (env: string) => string | undefined,
) => Promise<SmtpReply>;

/**
 * A channel kind: one folder under `src/channels/`. `R` is what `format` renders (an HTTP request
 * for all but email), `P` what the provider answers. Methods (not arrow properties) so a registry
 * can hold kinds with different config types.
 */
export interface ChannelKind<C, R = HttpRequest, P = HttpResponse> {
  type: string;
  /** Strict schema of `channels.<name>` in the config; secrets appear only as `*_env` names. */
  configSchema: z.ZodType<C>;
  /** Can carry approve/reject as buttons; the others carry the confirmation-page link. */
  buttons: boolean;
  /** Cap of the rendered main text, in `lengthUnit`; longer detail is cut with an ellipsis. */
  maxLength: number;
  lengthUnit: 'bytes' | 'chars';
  /** Pure: the same message, config and context give the same request. Throws ChannelConfigError. */
  format(msg: Message, config: C, ctx: FormatContext): R;
  /** Maps the provider's answer (status and business body) onto ok / retry / dead. */
  parseResult(res: P): SendResult;
  /**
   * What the provider's own protocol says about one answer of any status — a business code, a
   * rate-limit hint in the body or in a provider header — or undefined when the answer says nothing
   * beyond its HTTP status. `parseResult` is this verdict, else the status. The delivery engine asks
   * it on every non-2xx answer: a `retry` or `dead` here wins over the engine's status rules
   * (docs/delivery.md, "Who decides"). Kinds without it (webhook, alertmanager, ntfy, DingTalk,
   * WeCom: errors inside a 200) leave non-2xx answers to the status rules.
   */
  verdict?(res: P): SendResult | undefined;
  /** format → one send → parseResult. Never throws for provider or network failures. */
  send(msg: Message, config: C, deps: SendDeps): Promise<SendResult>;
}

/** A config problem that no retry can fix (a missing secret, no signer): send maps it to `dead`. */
export class ChannelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChannelConfigError';
  }
}

/**
 * Thrown by an `HttpPost` or `SmtpTransport` that refuses the target (the egress policy): no retry
 * reaches a blocked address, so `send` maps it to `dead`. Egress defines it; channels re-export it.
 */
export { TargetRefusedError } from '../egress/index.js';
