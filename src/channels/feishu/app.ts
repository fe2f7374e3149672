import {
  ChannelConfigError,
  type HttpRequest,
  type HttpResponse,
  type SendDeps,
  type SendResult,
  TargetRefusedError,
} from '../channel.js';
import type { Message } from '../../notify/port.js';
import {
  classifyStatus,
  isRecord,
  JSON_HEADERS,
  networkError,
  parseJson,
  providerText,
  SEND_TIMEOUT_MS,
} from '../http.js';
import { resultFromVerdict } from '../define.js';
import { type FeishuAppConfig, type FeishuConfig, formatFeishu, openApiBase } from './format.js';

/**
 * App-bot sending: a tenant access token (`auth/v3/tenant_access_token/internal`), cached per app,
 * then `im/v1/messages`. The token lives only in this process's memory, never in a result or log.
 */

/**
 * The codes the official SDKs (oapi-sdk-go, node-sdk) answer by dropping the cached token and
 * trying once more: 99991663 tenant token invalid or expired, 99991671 access token invalid,
 * plus 99991661 (no or malformed token). 99991668 is the *user* token code and cannot occur here.
 */
export const TOKEN_INVALID_CODES: ReadonlySet<number> = new Set([99991661, 99991663, 99991671]);

/** Refresh this long before `expire` (Feishu hands out a new token once less than 30 min remain). */
export const TOKEN_REFRESH_MARGIN_MS = 5 * 60_000;

/** The documented lifetime, for an answer that omits `expire`. */
const DEFAULT_EXPIRE_SECONDS = 7200;

type Failure = Exclude<SendResult, { kind: 'ok' }>;
type TokenResult = { kind: 'token'; token: string } | Failure;

interface Cached {
  token: string;
  /** Use until then (`expire` minus the margin). */
  until: number;
}

// Per base URL and app: Feishu and Lark are separate platforms with separate tokens.
const cache = new Map<string, Cached>();
const pending = new Map<string, Promise<TokenResult>>();

const keyOf = (app: FeishuAppConfig) => `${openApiBase(app)}\n${app.app_id}`;

/** Forgets every cached token (tests; a rotated app secret). */
export function clearFeishuTokens(): void {
  cache.clear();
  pending.clear();
}

/** Business codes that pass with time: custom-bot and open-API frequency limits, a send in progress. */
const RETRYABLE_CODES: ReadonlySet<number> = new Set([
  9499, // custom bot: too many requests
  11232, // custom bot: frequency control
  99991400, // open API gateway: request trigger frequency limit (HTTP 429)
  230020, // im/v1/messages: this operation triggers the frequency limit (HTTP 400)
  230049, // im/v1/messages: the message is being sent
]);

/** Feishu's gateway names the seconds until the limit resets in `x-ogw-ratelimit-reset`. */
function resetMs(res: HttpResponse): number | undefined {
  const raw = res.headers['x-ogw-ratelimit-reset'] ?? res.headers['retry-after'];
  const secs = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(secs) && secs >= 0 ? Math.round(secs * 1000) : undefined;
}

/**
 * Feishu's own reading of an answer of any status. Both modes answer `{code, msg}`: a custom bot with
 * HTTP 200, the open API with 200 on success and mostly 400/429 on failure (230020, the frequency
 * limit, comes with HTTP 400). A 429 without a code still names its reset in `x-ogw-ratelimit-reset`.
 * Undefined when the answer carries neither (a proxy's 502 page): its status decides.
 */
export function feishuVerdict(res: HttpResponse): SendResult | undefined {
  const body = parseJson(res.body);
  const code = isRecord(body) ? (body['code'] ?? body['StatusCode']) : undefined;
  const text = isRecord(body) ? String(body['msg'] ?? body['StatusMessage'] ?? '') : providerText(res.body);
  if (typeof code === 'number' && code !== 0) {
    const error = `feishu code ${code}: ${providerText(text)}`;
    if (RETRYABLE_CODES.has(code) || res.status === 429) {
      const after = resetMs(res);
      return after === undefined ? { kind: 'retry', error } : { kind: 'retry', error, retryAfterMs: after };
    }
    // A token that went bad between fetch and use: the next attempt fetches a fresh one.
    if (TOKEN_INVALID_CODES.has(code) || res.status >= 500) return { kind: 'retry', error };
    return { kind: 'dead', reason: error };
  }
  if (res.status === 429) {
    const after = resetMs(res);
    if (after !== undefined)
      return { kind: 'retry', error: `HTTP 429: ${providerText(res.body)}`, retryAfterMs: after };
  }
  if (code === 0 && res.status >= 200 && res.status < 300) {
    const data = isRecord(body) ? body['data'] : undefined;
    const id = isRecord(data) ? data['message_id'] : undefined;
    return typeof id === 'string' && id !== '' ? { kind: 'ok', providerId: id } : { kind: 'ok' };
  }
  return undefined;
}

/** Only `code == 0` (or the legacy `StatusCode == 0`) on a 2xx is delivery. */
export const parseFeishuResult = resultFromVerdict(feishuVerdict, 'not a Feishu answer');

/** One POST through the injected (guarded) sender; a refused target is dead, a failure retried. */
async function post(deps: SendDeps, req: HttpRequest): Promise<HttpResponse | Failure> {
  try {
    return await deps.post({ ...req, timeoutMs: req.timeoutMs ?? SEND_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof TargetRefusedError) return { kind: 'dead', reason: err.message };
    return { kind: 'retry', error: networkError(err) };
  }
}

const failed = (r: HttpResponse | Failure): r is Failure => 'kind' in r;

async function fetchToken(app: FeishuAppConfig, deps: SendDeps): Promise<TokenResult> {
  const secret = deps.secret(app.app_secret_env);
  if (secret === undefined || secret === '') {
    return { kind: 'dead', reason: `environment variable ${app.app_secret_env} is not set` };
  }
  const res = await post(deps, {
    url: `${openApiBase(app)}/open-apis/auth/v3/tenant_access_token/internal`,
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({ app_id: app.app_id, app_secret: secret }),
  });
  if (failed(res)) return res;
  const body = parseJson(res.body);
  const code = isRecord(body) ? body['code'] : undefined;
  if (typeof code === 'number' && code !== 0) {
    const error = `feishu token code ${code}: ${providerText(String(isRecord(body) ? (body['msg'] ?? '') : ''))}`;
    if (RETRYABLE_CODES.has(code) || res.status === 429 || res.status >= 500) {
      const after = resetMs(res);
      return after === undefined ? { kind: 'retry', error } : { kind: 'retry', error, retryAfterMs: after };
    }
    return {
      kind: 'dead',
      reason: `${error} (check app.app_id and the App Secret in ${app.app_secret_env})`,
    };
  }
  const status = classifyStatus(res);
  if (status?.kind === 'retry') {
    // The same hint `feishuVerdict` reads, so the engine's chosen failure keeps it.
    const after = resetMs(res);
    const error = `feishu token: ${status.error}`;
    return after === undefined ? { kind: 'retry', error } : { kind: 'retry', error, retryAfterMs: after };
  }
  if (status?.kind === 'dead') return { kind: 'dead', reason: `feishu token: ${status.reason}` };
  const token = isRecord(body) ? body['tenant_access_token'] : undefined;
  if (code !== 0 || typeof token !== 'string' || token === '') {
    return { kind: 'dead', reason: `not a Feishu token answer: HTTP ${res.status} (check app.base_url)` };
  }
  const expire =
    isRecord(body) && typeof body['expire'] === 'number' ? body['expire'] : DEFAULT_EXPIRE_SECONDS;
  const lifetime = Math.max(0, expire * 1000);
  cache.set(keyOf(app), {
    token,
    until: deps.now() + lifetime - Math.min(TOKEN_REFRESH_MARGIN_MS, lifetime / 2),
  });
  return { kind: 'token', token };
}

/** The cached token while it has time left; otherwise one fetch shared by concurrent sends. */
async function tenantToken(app: FeishuAppConfig, deps: SendDeps): Promise<TokenResult> {
  const key = keyOf(app);
  const hit = cache.get(key);
  if (hit && deps.now() < hit.until) return { kind: 'token', token: hit.token };
  let inflight = pending.get(key);
  if (!inflight) {
    inflight = fetchToken(app, deps).finally(() => pending.delete(key));
    pending.set(key, inflight);
  }
  return inflight;
}

/** Drops `token` from the cache unless a concurrent send already replaced it. */
function forget(app: FeishuAppConfig, token: string): void {
  const key = keyOf(app);
  if (cache.get(key)?.token === token) cache.delete(key);
}

function tokenInvalid(res: HttpResponse): boolean {
  const body = parseJson(res.body);
  return isRecord(body) && typeof body['code'] === 'number' && TOKEN_INVALID_CODES.has(body['code']);
}

/**
 * format → token → `im/v1/messages`; on a token the platform calls invalid the message is sent once
 * more (same body, same uuid, so Feishu still posts it at most once).
 */
export async function sendFeishuApp(
  msg: Message,
  config: FeishuConfig,
  app: FeishuAppConfig,
  deps: SendDeps,
): Promise<SendResult> {
  let req: HttpRequest;
  try {
    req = formatFeishu(msg, config, { now: deps.now(), secret: deps.secret });
  } catch (err) {
    if (err instanceof ChannelConfigError) return { kind: 'dead', reason: err.message };
    throw err;
  }
  const res = await postAsApp(app, deps, req);
  return failed(res) ? res : parseFeishuResult(res);
}

/**
 * One open-API request as the app: the cached tenant token as `Authorization: Bearer t-…`; a token
 * the platform calls invalid is dropped, fetched again and the request sent once more.
 */
async function postAsApp(
  app: FeishuAppConfig,
  deps: SendDeps,
  req: HttpRequest,
): Promise<HttpResponse | Failure> {
  const withToken = (token: string): HttpRequest => ({
    ...req,
    headers: { ...req.headers, authorization: `Bearer ${token}` },
  });
  let token = await tenantToken(app, deps);
  if (token.kind !== 'token') return token;
  const res = await post(deps, withToken(token.token));
  if (failed(res) || !tokenInvalid(res)) return res;
  forget(app, token.token);
  token = await tenantToken(app, deps);
  if (token.kind !== 'token') return token;
  return post(deps, withToken(token.token));
}

/**
 * Replaces a card this app sent (`PATCH im/v1/messages/:message_id`, the card as a JSON string in
 * `content`; both cards declare `config.update_multi`). Same token rules as a send: one fresh token
 * and one more try when the platform calls the cached one invalid. A message Feishu no longer updates
 * (recalled, older than 14 days, not a shared card) answers a non-zero code and is dead, not retried.
 */
export async function updateFeishuAppCard(
  messageId: string,
  card: unknown,
  app: FeishuAppConfig,
  deps: SendDeps,
): Promise<SendResult> {
  if (!/^om_[A-Za-z0-9_-]+$/.test(messageId)) {
    return { kind: 'dead', reason: `not a Feishu message id: ${providerText(messageId)}` };
  }
  const req: HttpRequest = {
    url: `${openApiBase(app)}/open-apis/im/v1/messages/${messageId}`,
    method: 'PATCH',
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({ content: JSON.stringify(card) }),
  };
  const res = await postAsApp(app, deps, req);
  if (failed(res)) return res;
  const verdict = parseFeishuResult(res);
  // The update answers no message id of its own: the card keeps the one it was sent with.
  return verdict.kind === 'ok' ? { kind: 'ok', providerId: messageId } : verdict;
}
