import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { BlockReason } from './ssrf.js';

/**
 * One HTTP attempt, no retries, no classification (delivery's `retry.ts` does that). It drives undici's pooled
 * dispatcher directly with a small handler instead of `request()`: the handler learns the moment
 * the request is handed to a connected socket, which is what `sent` means — after that point a
 * timeout or reset leaves the effect unknown; before it, nothing reached the receiver.
 */

/** Svix's hosted limit; a receiver that needs longer should answer 2xx and work asynchronously. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Enough for any error message a receiver or chat API returns; a larger body is cut, not buffered. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

export type SendError =
  | 'timeout' // the attempt's deadline passed
  | 'reset' // the connection was reset or closed by the peer
  | 'refused' // nothing listens there
  | 'unreachable' // no route to the host
  | 'dns' // the name does not resolve
  | 'tls' // handshake or certificate failure
  | 'blocked' // the SSRF guard refused the target
  | 'aborted' // the caller's signal
  | 'other';

export interface SendRequest {
  url: string | URL;
  /** Absent for a GET (the ingress re-read). */
  body?: string | Uint8Array;
  headers: Record<string, string>;
  method?: 'POST' | 'PUT' | 'PATCH' | 'GET';
  timeoutMs?: number;
  maxResponseBytes?: number;
  dispatcher: Dispatcher;
  signal?: AbortSignal;
}

export interface SendResult {
  /** Whether the request was handed to a connected socket; if so the receiver may have acted on it. */
  sent: boolean;
  /** Final (non-1xx) status, when the receiver answered. */
  status?: number;
  /** Response headers, lower-case names, repeated headers joined with ", ". */
  headers?: Record<string, string>;
  /** The first `maxResponseBytes` of the body as UTF-8. */
  body?: string;
  /** The body was longer than `maxResponseBytes` and was cut (the connection is dropped). */
  truncated?: boolean;
  /** Set when the attempt failed; with `status` present it failed while the body was read. */
  error?: SendError;
  /** Why the guard refused, when `error` is `blocked`. */
  blocked?: { reason: BlockReason; detail: string };
  /** A short, secret-free description of the failure (an error code, never the URL). */
  detail?: string;
  durationMs: number;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

function errorKind(err: unknown): { error: SendError; detail: string; blocked?: SendResult['blocked'] } {
  const e = err as { code?: unknown; reason?: unknown; detail?: unknown; name?: unknown };
  const code = typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : 'unknown';
  if (code === 'ERR_EGRESS_BLOCKED') {
    const blocked = { reason: e.reason as BlockReason, detail: String(e.detail) };
    return { error: 'blocked', detail: `${blocked.reason}: ${blocked.detail}`, blocked };
  }
  if (code === 'ECONNREFUSED') return { error: 'refused', detail: code };
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return { error: 'unreachable', detail: code };
  if (DNS_CODES.has(code)) return { error: 'dns', detail: code };
  if (RESET_CODES.has(code)) return { error: 'reset', detail: code };
  if (TIMEOUT_CODES.has(code)) return { error: 'timeout', detail: code };
  if (/CERT|SSL|TLS/.test(code)) return { error: 'tls', detail: code };
  return { error: 'other', detail: code };
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function bodyBytes(body: SendRequest['body']): Buffer | null {
  if (body === undefined) return null;
  if (typeof body === 'string') return Buffer.from(body);
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** Sends one request and reports what happened; never throws for network or HTTP failures. */
export function sendOnce(req: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cap = req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
  const headers: Record<string, string> = { 'user-agent': 'Switchboard', ...req.headers };

  return new Promise<SendResult>((resolve) => {
    let sent = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let status: number | undefined;
    let responseHeaders: Record<string, string> | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let abandoned: unknown;

    const finish = (failure?: { error: SendError; detail: string; blocked?: SendResult['blocked'] }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      const result: SendResult = { sent, durationMs: Math.round(performance.now() - started) };
      if (status !== undefined) {
        result.status = status;
        result.headers = responseHeaders ?? {};
        result.body = Buffer.concat(chunks, Math.min(size, cap)).toString('utf8');
        if (truncated) result.truncated = true;
      }
      if (failure) Object.assign(result, failure);
      resolve(result);
    };

    // Stop the attempt: abort the socket if it has one; otherwise refuse it at the moment undici
    // would hand it a socket, before a byte is written.
    const stop = (reason: unknown, failure: { error: SendError; detail: string }) => {
      abandoned = reason;
      finish(failure); // first: the abort below reports back synchronously through onResponseError
      controller?.abort(reason as Error);
    };
    const timer = setTimeout(
      () =>
        stop(new Error('attempt deadline'), { error: 'timeout', detail: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    const onAbort = () => stop(new Error('aborted'), { error: 'aborted', detail: 'aborted by the caller' });
    if (req.signal?.aborted) {
      onAbort();
      return;
    }
    req.signal?.addEventListener('abort', onAbort, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctl) {
        if (abandoned !== undefined) {
          ctl.abort(abandoned as Error);
          return;
        }
        controller = ctl;
        sent = true;
      },
      onResponseStart(_ctl, statusCode, resHeaders) {
        if (statusCode < 200) return;
        status = statusCode;
        responseHeaders = flattenHeaders(resHeaders);
      },
      onResponseData(ctl, chunk) {
        if (status === undefined || truncated) return;
        size += chunk.length;
        if (size > cap) {
          truncated = true;
          chunks.push(chunk.subarray(0, chunk.length - (size - cap)));
          size = cap;
          finish();
          ctl.abort(new Error('response body over the cap'));
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd() {
        finish();
      },
      onResponseError(_ctl, err) {
        finish(errorKind(err));
      },
    };

    try {
      req.dispatcher.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: req.method ?? 'POST',
          headers,
          body: bodyBytes(req.body),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        handler,
      );
    } catch (err) {
      finish(errorKind(err));
    }
  });
}
