import { z } from 'zod';
import { readJsonText } from '../../envelope/json.js';
import type { Egress } from '../../egress/index.js';

/**
 * Re-reading the authoritative object before a run is admitted: a webhook says what happened at send
 * time, and by admission the PR may be closed, merged or pushed again. The fetch goes through egress
 * (the SSRF guard and `egress.allow`), never straight to a host named in a payload.
 */

/** GitHub's public API; GitHub Enterprise sets `api_url` to `https://<host>/api/v3`. */
export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';
/** Admission waits for this fetch; GitHub answers a PR read in well under a second. */
export const FETCH_TIMEOUT_MS = 10_000;
/** A PR object is a few tens of KB; more than this is not a PR. */
const MAX_FETCH_BYTES = 1024 * 1024;

export const fetchSchema = z.strictObject({
  type: z.literal('github-pr'),
  api_url: z.url().default(DEFAULT_GITHUB_API_URL),
  /** The environment variable holding a token for the API (a GitHub App or fine-grained token). */
  token_env: z.string().min(1).optional(),
});

export type FetchConfig = z.infer<typeof fetchSchema>;

export type FetchOutcome =
  /** The authoritative object, and the small trusted facts a task may be templated from. */
  | { kind: 'fetched'; value: unknown; trusted: Record<string, string> }
  /** The payload names no object of this kind (e.g. a push for a PR fetcher): nothing to re-read. */
  | { kind: 'not_applicable'; reason: string }
  /** The API did not give the object: admission fails and the relay retries it. */
  | { kind: 'failed'; reason: string }
  /** The API refused the configured token (401): the credential was revoked at the provider. */
  | { kind: 'revoked'; reason: string };

const asRecord = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** `owner/repo` and the PR number a GitHub payload is about (pull_request, review, issue_comment on a PR). */
export function pullRequestOf(payload: unknown): { fullName: string; number: number } | undefined {
  const p = asRecord(payload);
  const fullName = asRecord(p?.repository)?.full_name;
  const pr = asRecord(p?.pull_request);
  const issue = asRecord(p?.issue);
  const number =
    (typeof pr?.number === 'number' ? pr.number : undefined) ??
    (issue && asRecord(issue.pull_request) && typeof issue.number === 'number' ? issue.number : undefined) ??
    (pr && typeof p?.number === 'number' ? p.number : undefined);
  if (typeof fullName !== 'string' || !/^[\w.-]+\/[\w.-]+$/.test(fullName) || number === undefined)
    return undefined;
  return { fullName, number };
}

export function pullRequestUrl(apiUrl: string, pr: { fullName: string; number: number }): URL {
  const base = apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`;
  return new URL(`repos/${pr.fullName}/pulls/${pr.number}`, base);
}

/**
 * Facts of the PR a task may use in its arguments: identifiers and states only. Titles, bodies and
 * branch names are written by whoever opened the PR and stay untrusted even when the API returns them.
 */
export function pullRequestFacts(value: unknown): Record<string, string> {
  const pr = asRecord(value) ?? {};
  const out: Record<string, string> = {};
  const sha = asRecord(pr.head)?.sha;
  if (typeof sha === 'string' && /^[0-9a-f]{7,64}$/.test(sha)) out['fetched.head.sha'] = sha;
  if (typeof pr.state === 'string' && /^[a-z]{1,20}$/.test(pr.state)) out['fetched.state'] = pr.state;
  if (typeof pr.merged === 'boolean') out['fetched.merged'] = String(pr.merged);
  if (typeof pr.draft === 'boolean') out['fetched.draft'] = String(pr.draft);
  if (typeof pr.number === 'number') out['fetched.number'] = String(pr.number);
  return out;
}

export interface FetchDeps {
  egress: Pick<Egress, 'send'>;
  env: (name: string) => string | undefined;
  timeoutMs?: number;
}

/** GETs the PR the payload is about. Never throws; the reason never holds the token or the body. */
export async function fetchAuthoritative(
  config: FetchConfig,
  payload: unknown,
  deps: FetchDeps,
): Promise<FetchOutcome> {
  const pr = pullRequestOf(payload);
  if (!pr) return { kind: 'not_applicable', reason: 'the payload names no pull request' };
  const headers: Record<string, string> = {
    accept: 'application/vnd.github+json',
    'user-agent': 'Switchboard',
    'x-github-api-version': '2022-11-28',
  };
  if (config.token_env) {
    const token = deps.env(config.token_env);
    if (!token) return { kind: 'failed', reason: `$${config.token_env} is not set` };
    headers.authorization = `Bearer ${token}`;
  }
  const r = await deps.egress.send({
    url: pullRequestUrl(config.api_url, pr),
    method: 'GET',
    headers,
    timeoutMs: deps.timeoutMs ?? FETCH_TIMEOUT_MS,
    maxResponseBytes: MAX_FETCH_BYTES,
  });
  // The detail is an error code or the guard's host-only reason, never the token or the path.
  const failure = () =>
    `the request failed (${r.error === 'blocked' ? 'blocked: ' : ''}${r.detail ?? r.error})`;
  if (r.status === undefined) return { kind: 'failed', reason: failure() };
  if (r.status === 401 && config.token_env)
    return { kind: 'revoked', reason: `the API answered 401 to the token in $${config.token_env}` };
  const length = Number(r.headers?.['content-length'] ?? 0);
  if (r.status !== 200 || length > MAX_FETCH_BYTES)
    return { kind: 'failed', reason: `the API answered ${r.status}` };
  if (r.error !== undefined) return { kind: 'failed', reason: failure() };
  if (r.truncated) return { kind: 'failed', reason: 'the API answer is too large' };
  // The API's answer is outside input too: the same depth and Unicode rules as a request body.
  const read = readJsonText(r.body ?? '', { repair: true });
  if (!read.ok)
    return {
      kind: 'failed',
      reason: `the request failed (${read.code === 'invalid_json' ? 'SyntaxError' : read.code})`,
    };
  return { kind: 'fetched', value: read.value, trusted: pullRequestFacts(read.value) };
}
