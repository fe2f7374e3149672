/**
 * The closed catalogue of errors the HTTP API returns. Each code is stable (clients branch on it),
 * has one HTTP status, and is documented in docs/errors.md; `errors.test.ts` keeps the two in sync.
 * A module that needs a new error adds it here and there, never an ad-hoc string.
 */
export const ERRORS = {
  bad_request: { status: 400, message: 'The request is malformed.' },
  invalid_json: { status: 400, message: 'The body is not valid JSON.' },
  json_too_deep: { status: 400, message: 'The JSON is nested deeper than 64 levels.' },
  unrepresentable_json: {
    status: 400,
    message:
      'The JSON holds a lone UTF-16 surrogate or a number beyond a double (RFC 8785 has no form for it).',
  },
  validation_failed: { status: 400, message: 'The body does not match the schema.' },
  unauthorized: { status: 401, message: 'A valid bearer key is required.' },
  bad_signature: { status: 401, message: 'The signature is missing, malformed or does not match.' },
  forbidden: { status: 403, message: 'This key does not have the role this action needs.' },
  host_not_allowed: { status: 403, message: 'This gateway does not answer for this Host.' },
  origin_not_allowed: { status: 403, message: 'A page from this Origin may not call this gateway.' },
  self_approval: { status: 403, message: 'An agent key cannot resolve an approval.' },
  address_not_allowed: { status: 403, message: "The sender's address is not on this source's allow-list." },
  source_unbound: {
    status: 403,
    message: 'The installation, repository or workspace of this delivery is not bound to a tenant.',
  },
  csrf_failed: {
    status: 403,
    message: 'The CSRF token is missing or wrong, or the request came from another site.',
  },
  not_found: { status: 404, message: 'No such resource.' },
  unknown_source: { status: 404, message: 'No webhook source has this name.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path.' },
  conflict: { status: 409, message: 'The resource is not in a state that allows this.' },
  already_decided: { status: 409, message: 'The approval was already decided.' },
  expired: { status: 410, message: 'The resource has expired.' },
  payload_too_large: { status: 413, message: 'The body is larger than the limit.' },
  unsupported_media_type: { status: 415, message: 'The content type is not accepted here.' },
  rate_limited: { status: 429, message: 'Too many requests; retry later.' },
  internal: { status: 500, message: 'Internal error.' },
  store_unavailable: { status: 503, message: 'The store is unreachable; nothing was written.' },
  store_full: { status: 507, message: 'The store has no space left; nothing was written.' },
  not_ready: { status: 503, message: 'The gateway is not ready.' },
  policy_unavailable: { status: 503, message: 'No policy revision is loaded.' },
  // agents (src/agents, docs/agents.md): a collaboration that cannot be routed or may not run
  NO_AGENT_FOR_SKILL: { status: 404, message: 'No registered agent offers this skill.' },
  NO_AGENT_AVAILABLE: { status: 503, message: 'Every agent with this skill is down.' },
  COLLABORATION_CYCLE: {
    status: 409,
    message: 'The collaboration would close a wait-for cycle: two agents would wait on each other.',
  },
  COLLABORATION_LIMIT: { status: 429, message: 'The collaboration is past the depth or fan-out limit.' },
  DELEGATION_DENIED: { status: 403, message: 'The policy refused this delegation.' },
  AGENT_CARD_INVALID: { status: 400, message: 'The agent card could not be fetched or is not A2A v1.0.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An error that maps onto a catalogue entry; `message` is safe to show to the caller. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;

  constructor(code: ErrorCode, message?: string, details?: unknown, options?: { cause?: unknown }) {
    super(message ?? ERRORS[code].message, options);
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = details;
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

export function errorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: { code: err.code, message: err.message } };
  if (err.details !== undefined) body.error.details = err.details;
  return body;
}
