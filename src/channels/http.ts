import { z } from 'zod';
import { outboundUrl } from '../egress/index.js';
import { readJsonText } from '../envelope/json.js';
import type { Message } from '../notify/port.js';
import {
  ChannelConfigError,
  TargetRefusedError,
  type FormatContext,
  type HttpRequest,
  type HttpResponse,
  type SendDeps,
  type SendResult,
} from './channel.js';
import { prefix } from '../text/index.js';

/** What the HTTP channels share: config pieces, status classification, and the one send. */

/** A provider that has not answered in this long is treated as down; the relay retries later. */
export const SEND_TIMEOUT_MS = 10_000;

/** Provider error text is kept short in results and audit: enough to diagnose, never a whole page. */
const PROVIDER_TEXT_MAX = 200;

export const envName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'must be an environment variable name (the secret itself stays in the env)',
  );

/** A channel's URL key: http or https, no user info (`src/egress/url.ts`). */
export const httpUrl = outboundUrl;

/** Webhook URLs with the token inside them (Feishu, DingTalk, WeCom, Discord, Slack) may come from env. */
export const urlOrEnv = {
  url: httpUrl.optional(),
  url_env: envName.optional(),
};

export function exactlyOneUrl(c: { url?: string | undefined; url_env?: string | undefined }): boolean {
  return (c.url === undefined) !== (c.url_env === undefined);
}

export const ONE_URL = { message: 'set exactly one of url or url_env' };

export function requireSecret(ctx: FormatContext, env: string): string {
  const value = ctx.secret(env);
  if (value === undefined || value === '')
    throw new ChannelConfigError(`environment variable ${env} is not set`);
  return value;
}

export function resolveUrl(
  c: { url?: string | undefined; url_env?: string | undefined },
  ctx: FormatContext,
): string {
  if (c.url !== undefined) return c.url;
  if (c.url_env !== undefined) return requireSecret(ctx, c.url_env);
  throw new ChannelConfigError('set exactly one of url or url_env');
}

export function providerText(body: string): string {
  const oneLine = body.replace(/\s+/g, ' ').trim();
  return oneLine.length > PROVIDER_TEXT_MAX ? `${prefix(oneLine, PROVIDER_TEXT_MAX)}…` : oneLine;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`. */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const raw = headers['retry-after'];
  if (raw === undefined) return undefined;
  const secs = Number(raw);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A provider's answer: outside input, read with the door's depth and Unicode rules (envelope/json.ts). */
export function parseJson(body: string): unknown {
  const read = readJsonText(body, { repair: true });
  return read.ok ? read.value : undefined;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The transport-level answer, before any business body is read: 429 and 5xx (and 408) are worth
 * retrying, other 4xx and 3xx are not (a redirect is never followed: it could point anywhere).
 * Returns undefined for 2xx, where the channel reads the provider's own result.
 */
export function classifyStatus(res: HttpResponse): SendResult | undefined {
  if (res.status >= 200 && res.status < 300) return undefined;
  const text = `HTTP ${res.status}: ${providerText(res.body)}`;
  if (res.status === 429) {
    const after = retryAfterMs(res.headers);
    return after === undefined
      ? { kind: 'retry', error: text }
      : { kind: 'retry', error: text, retryAfterMs: after };
  }
  if (res.status === 408 || res.status >= 500) return { kind: 'retry', error: text };
  return { kind: 'dead', reason: text };
}

/** Names the failure without its message: undici messages can carry the URL, and URLs carry tokens. */
export function networkError(err: unknown): string {
  if (isRecord(err)) {
    const cause = isRecord(err['cause']) ? err['cause'] : undefined;
    const code = cause?.['code'] ?? err['code'] ?? err['name'];
    if (typeof code === 'string') return `network error (${code})`;
  }
  return 'network error';
}

interface HttpKind<C> {
  format(msg: Message, config: C, ctx: FormatContext): HttpRequest;
  parseResult(res: HttpResponse): SendResult;
}

/** format → one POST → parseResult; config problems become `dead`, network failures `retry`. */
export async function sendHttp<C>(
  kind: HttpKind<C>,
  msg: Message,
  config: C,
  deps: SendDeps,
): Promise<SendResult> {
  let req: HttpRequest;
  try {
    req = kind.format(msg, config, { now: deps.now(), secret: deps.secret });
  } catch (err) {
    if (err instanceof ChannelConfigError) return { kind: 'dead', reason: err.message };
    throw err;
  }
  let res: HttpResponse;
  try {
    res = await deps.post({ ...req, timeoutMs: req.timeoutMs ?? SEND_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof TargetRefusedError) return { kind: 'dead', reason: err.message };
    return { kind: 'retry', error: networkError(err) };
  }
  return kind.parseResult(res);
}

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

/**
 * The robots that answer HTTP 200 with `{ errcode, errmsg }` (DingTalk, WeCom): only `errcode == 0` is
 * delivery; the codes in `retryable` pass with time, any other code needs the config fixed.
 */
export function errcodeResult(
  res: HttpResponse,
  provider: { name: string; tag: string; retryable: ReadonlySet<number> },
): SendResult {
  const status = classifyStatus(res);
  if (status) return status;
  const body = parseJson(res.body);
  const code = isRecord(body) ? body['errcode'] : undefined;
  if (code === 0) return { kind: 'ok' };
  if (typeof code !== 'number')
    return { kind: 'dead', reason: `not a ${provider.name} answer: ${providerText(res.body)}` };
  const text = `${provider.tag} errcode ${code}: ${isRecord(body) ? providerText(String(body['errmsg'] ?? '')) : ''}`;
  return provider.retryable.has(code) ? { kind: 'retry', error: text } : { kind: 'dead', reason: text };
}
