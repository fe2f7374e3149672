import { z } from 'zod';
import { CHANNELS, type Channel } from './config.js';
import { prefix } from '../text/index.js';

/**
 * The touch protocol (seed §2.1): one request shape in, one response shape out, whatever the backend.
 * `caller` is accepted in a request for the seed's shape but never read: who calls is the bearer key.
 */

/** Caller-chosen ids are idempotency keys: short, printable, safe in a URL path. */
export const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export const touchRequestSchema = z.strictObject({
  request_id: z.string().regex(REQUEST_ID, 'must be 1–128 of A-Z a-z 0-9 _ . : -').optional(),
  tool_name: z.string().min(1).max(200),
  params: z.record(z.string(), z.unknown()).default({}),
  channel: z.enum(CHANNELS).optional(),
  /** Seconds; may shorten the tool's deadline, never lengthen it. */
  timeout: z.number().positive().max(3600).optional(),
  /** Extra attempts after a failed `read` touch; a write is never repeated by the gateway. */
  retry: z.number().int().min(0).max(2).default(0),
  /**
   * Async only: a `channels:` entry of type `webhook`. The finished touch is pushed there by the
   * delivery engine (signed, retried, egress-guarded), besides GET /v1/touch/{request_id}.
   */
  callback: z.string().min(1).max(200).optional(),
  /** The seed's field; ignored (the key says who calls). */
  caller: z.string().max(200).optional(),
});

export type TouchRequest = z.input<typeof touchRequestSchema>;
export type ParsedTouchRequest = z.output<typeof touchRequestSchema>;

/**
 * The closed catalogue of touch errors, each with the HTTP status `POST /v1/touch` answers with and
 * what the caller should do. docs/reach.md lists the same rows (registry.test.ts keeps them in sync).
 */
export const TOUCH_ERRORS = {
  TOOL_NOT_FOUND: { status: 404, hint: 'use one of the names in `details.did_you_mean` or GET /v1/tools' },
  INVALID_PARAMS: { status: 400, hint: 'fix each path in `details.problems` and call again' },
  DENIED: { status: 403, hint: 'the policy refused this call (`details.reason_code`); do not retry as is' },
  APPROVAL_REQUIRED: {
    status: 202,
    hint: 'a person must approve `details.approval_id`; call again with the same request_id once approved',
  },
  TIMEOUT: { status: 504, hint: 'the backend did not answer in time; narrow the call or use channel async' },
  CONCURRENCY_LIMIT: { status: 429, hint: 'this tool is at its concurrency limit; retry in a moment' },
  TOUCH_CAP: { status: 429, hint: 'this task reached its touch cap; stop calling tools and report' },
  TOOL_FAILED: { status: 502, hint: 'the backend failed (`details.status`, `details.excerpt`)' },
  RESULT_TOO_LARGE: { status: 502, hint: 'ask for less (a LIMIT, a filter, a page)' },
} as const satisfies Record<string, { status: number; hint: string }>;

export type TouchErrorCode = keyof typeof TOUCH_ERRORS;

export interface TouchError {
  code: TouchErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export type TouchStatus = 'running' | 'awaiting_approval' | 'done' | 'failed';

export interface TouchResponse {
  request_id: string;
  ok: boolean;
  data?: unknown;
  error?: TouchError;
  cost_ms: number;
  /** Async touches and GET /v1/touch/{id}: where the touch is. Absent on a finished sync answer. */
  status?: TouchStatus;
  /** The processed result as `field: value` text (what MCP puts in its text content). */
  text?: string;
  /** How the result was shaped for the model (mode, items left out, tokens before and after). */
  context?: ContextReport;
}

export interface ContextReport {
  mode: 'raw' | 'summary' | 'head_tail';
  total_items?: number;
  omitted_items?: number;
  tokens_before: number;
  tokens_after: number;
  redacted: Record<string, number>;
}

/** One registry entry as GET /v1/tools lists it (the seed's `get_schemas()`). */
export interface ToolListing {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  channel: Channel;
  timeout_ms: number;
  permission: 'read' | 'write' | 'admin';
  kind: string;
}

export class TouchFailure extends Error {
  constructor(
    readonly code: TouchErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'TouchFailure';
  }

  toError(): TouchError {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export function failed(request_id: string, e: TouchError, cost_ms: number): TouchResponse {
  return { request_id, ok: false, error: e, cost_ms };
}

const FIELDS = new Set<string>(Object.keys(touchRequestSchema.shape));
const isChannel = (v: unknown): v is Channel => (CHANNELS as readonly unknown[]).includes(v);
const isString = (v: unknown, min: number, max: number): v is string =>
  typeof v === 'string' && v.length >= min && v.length <= max;

/** An object zod takes as a record as it is: plain, string keys only, every key enumerable, no `__proto__`. */
function plainRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  const own = Reflect.ownKeys(v);
  return own.length === Object.keys(v).length && !Object.hasOwn(v, '__proto__');
}

/**
 * The request as `touchRequestSchema` would parse it, when it plainly passes: every touch pays for
 * a zod parse otherwise (~2 % of a touch's CPU in process: bench reach, docs/reach.md "Figures").
 * Anything unusual — an unknown or undefined field, a value at a bound's edge that this does not
 * check the way zod does, an odd object — answers undefined and goes through zod, which also words
 * the problems. protocol.test.ts checks that whatever this accepts, zod accepts as the same value.
 */
export function wellFormed(value: unknown): ParsedTouchRequest | undefined {
  if (!plainRecord(value)) return undefined;
  for (const k in value) if (!FIELDS.has(k) || value[k] === undefined) return undefined;
  const { request_id, tool_name, params, channel, timeout, retry, callback, caller } = value;
  if (!isString(tool_name, 1, 200)) return undefined;
  if (request_id !== undefined && !(typeof request_id === 'string' && REQUEST_ID.test(request_id)))
    return undefined;
  if (params !== undefined && !plainRecord(params)) return undefined;
  if (channel !== undefined && !isChannel(channel)) return undefined;
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= 3600))
    return undefined;
  if (retry !== undefined && retry !== 0 && retry !== 1 && retry !== 2) return undefined;
  if (callback !== undefined && !isString(callback, 1, 200)) return undefined;
  if (caller !== undefined && !isString(caller, 0, 200)) return undefined;
  return {
    ...(request_id !== undefined ? { request_id } : {}),
    tool_name,
    // zod's record is a copy: the caller's object is not the one defaults are filled into.
    params: params ? { ...params } : {},
    ...(channel !== undefined ? { channel } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
    retry: retry ?? 0,
    ...(callback !== undefined ? { callback } : {}),
    ...(caller !== undefined ? { caller } : {}),
  };
}

/**
 * A TouchRequest checked against its own schema. A malformed request (an unknown field, a channel
 * that does not exist, no tool name) is answered like bad params — INVALID_PARAMS naming each field —
 * so a model gets one answer shape whatever it got wrong.
 */
export function parseTouchRequest(
  value: unknown,
): { ok: true; req: ParsedTouchRequest } | { ok: false; response: TouchResponse } {
  const quick = wellFormed(value);
  if (quick) return { ok: true, req: quick };
  const r = touchRequestSchema.safeParse(value);
  if (r.success) return { ok: true, req: r.data };
  const problems = r.error.issues.map((i) => {
    const unknown = i.code === 'unrecognized_keys' ? (i as { keys?: string[] }).keys : undefined;
    const path = unknown ? unknown.join(', ') : i.path.length ? i.path.join('.') : '(request)';
    const message = unknown ? 'is not a field of a touch request; remove it' : i.message;
    return { path, message, keyword: i.code };
  });
  const id =
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { request_id?: unknown }).request_id === 'string'
      ? prefix(String((value as { request_id: string }).request_id), 128)
      : '';
  return {
    ok: false,
    response: failed(
      id,
      {
        code: 'INVALID_PARAMS',
        message: `the touch request is malformed: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
        details: { problems },
      },
      0,
    ),
  };
}
