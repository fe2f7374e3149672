import type { z } from 'zod';
import type { ErrorCode } from '../errors/catalogue.js';

/**
 * The interface every inbound webhook source implements (one folder each under `sources/`).
 * A source only answers "did this sender send these bytes, and what is its id for them": it
 * verifies before it parses, and never persists, admits or binds anything itself.
 */

export interface InboundRequest {
  /** Header names lower-cased; a repeated header arrives joined by ", " as fetch's `Headers` does. */
  headers: Readonly<Record<string, string>>;
  /** The body exactly as received: every scheme signs these bytes, never a re-serialised parse. */
  body: Uint8Array;
  /** Epoch milliseconds; injected so tests can move time. */
  now: number;
}

export type RejectReason =
  | 'missing_signature'
  | 'missing_id'
  | 'missing_timestamp'
  /** The timestamp header is present but is not an integer. */
  | 'bad_timestamp'
  /** The signature (or token) is malformed, truncated, of an unknown version, or does not match. */
  | 'bad_signature'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  /** Authentic, but the body cannot be read (not JSON, no event id, undecryptable). */
  | 'malformed'
  /** Authentic JSON nested deeper than MAX_JSON_DEPTH (envelope/json.ts): refused like any other body. */
  | 'too_deep';

export interface Accepted {
  kind: 'ok';
  /** The sender's id for this event, the same on its retries: the dedup key within this source. */
  deliveryId: string;
  /** The event's name as the sender calls it (GitHub `X-GitHub-Event`, Slack `event.type`), if any. */
  eventName: string | null;
  /** When the sender signed the request (epoch ms), for schemes that sign a timestamp. */
  timestamp?: number;
  /** The verified body, parsed: JSON, or a form decoded to an object; Feishu's decrypted. */
  payload: unknown;
}

/** A handshake the sender expects answered (Slack `url_verification`, Feishu challenge); never admitted. */
export interface Challenge {
  kind: 'challenge';
  response: { status: number; body: unknown; contentType?: string };
}

export interface Rejected {
  kind: 'rejected';
  reason: RejectReason;
  /** Safe to return to the caller: names headers and expectations, never a secret or an expected value. */
  message: string;
}

export type VerifyResult = Accepted | Challenge | Rejected;

/**
 * Which resource a delivery describes and how new its state is, as the sender stamps it (GitHub
 * `pull_request.updated_at`, GitLab `object_attributes.updated_at`, a Standard Webhooks timestamp).
 * Admission drops a delivery whose revision is older than the last one admitted for its resource
 * (docs/ingress-sources.md, ordering).
 */
export interface Revision {
  /** The resource within the source: `pull_request:octo/repo#12`. Facts only, never free text. */
  resource: string;
  /** The revision as epoch milliseconds; equal revisions are not out of order. */
  at: number;
  /** What else names the revision (a pull request's `head.sha`), shown beside it in the events. */
  tag?: string;
}

export interface Source {
  readonly type: string;
  verify(req: InboundRequest): VerifyResult;
  /**
   * For a scheme that must wait (a JWT checked against a JWKS fetched through egress, `a2a-push`): the
   * route awaits this instead of `verify` when a source has it.
   */
  verifyAsync?(req: InboundRequest): Promise<VerifyResult>;
  /**
   * What a tenant can be bound to, read from a verified payload (for example GitHub
   * `installation_id` and `repository`). Empty when the payload names nothing.
   */
  tenantBinding(payload: unknown): Record<string, string>;
  /** The resource and revision of a verified delivery; absent or undefined: the delivery is unordered. */
  revision?(accepted: Accepted): Revision | undefined;
}

/** Reads an environment variable; injected so tests and the vault can supply secrets. */
export type SecretLookup = (envName: string) => string | undefined;

/** What a kind may need besides its config and secrets: the egress guard, for a kind that fetches keys. */
export interface SourceDeps {
  egress?: Pick<import('../egress/index.js').Egress, 'send'>;
}

export interface SourceKind<C, D extends SourceDeps = SourceDeps> {
  /** The `type` value in `sources.<name>` config. */
  readonly type: string;
  /** A strict schema of `sources.<name>`: unknown keys are errors, secrets never appear in messages. */
  readonly configSchema: z.ZodType<C>;
  /** Resolves secrets now, so a missing one stops start-up; throws `SourceConfigError`. */
  create(config: C, secrets: SecretLookup, deps?: D): Source;
}

/** A configuration that parses but cannot be used (an unset environment variable, a non-base64 key). */
export class SourceConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceConfigError';
  }
}

/** The HTTP status of each rejection: the contract answers 401 to any signature or timestamp problem. */
export const REJECT_STATUS: Readonly<Record<RejectReason, 400 | 401>> = {
  missing_signature: 401,
  missing_id: 401,
  missing_timestamp: 401,
  bad_timestamp: 401,
  bad_signature: 401,
  timestamp_too_old: 401,
  timestamp_in_future: 401,
  malformed: 400,
  too_deep: 400,
};

/** The error catalogue code of each rejection, for `{ error: { code, message } }`. */
export const REJECT_ERROR_CODE: Readonly<Record<RejectReason, ErrorCode>> = {
  missing_signature: 'bad_signature',
  missing_id: 'bad_signature',
  missing_timestamp: 'bad_signature',
  bad_timestamp: 'bad_signature',
  bad_signature: 'bad_signature',
  timestamp_too_old: 'bad_signature',
  timestamp_in_future: 'bad_signature',
  malformed: 'bad_request',
  too_deep: 'json_too_deep',
};
