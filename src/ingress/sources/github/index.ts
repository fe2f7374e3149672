import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { Accepted, InboundRequest, Revision, Source, SourceKind, VerifyResult } from '../../source.js';
import { matchesAny } from '../common/compare.js';
import {
  bindings,
  bodyText,
  header,
  isRecord,
  parseForm,
  parseJson,
  pick,
  reject,
} from '../common/request.js';
import { revisionOf, stampMs } from '../common/revision.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';

// https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
const SIGNATURE = 'x-hub-signature-256';
const LEGACY_SIGNATURE = 'x-hub-signature';
const DELIVERY = 'x-github-delivery';
const EVENT = 'x-github-event';
const PREFIX = 'sha256=';

export const githubConfig = z
  .strictObject({
    type: z.literal('github'),
    secret_env: secretEnvField.optional(),
    secret: secretLiteralField.optional(),
  })
  .superRefine((v, ctx) => checkSecretPair(v, ctx, 'secret'));

export type GithubConfig = z.infer<typeof githubConfig>;

/**
 * GitHub signs the raw body with HMAC-SHA256 and signs no timestamp, so there is no freshness
 * window: `X-GitHub-Delivery` (the same on a redelivery) is what stops a replay, downstream.
 * The SHA-1 `X-Hub-Signature` is never accepted on its own: that would be a downgrade.
 */
export function verifyGithub(req: InboundRequest, secrets: readonly string[]): VerifyResult {
  const signature = header(req, SIGNATURE);
  if (signature === undefined) {
    const hint = header(req, LEGACY_SIGNATURE) ? ' (the SHA-1 X-Hub-Signature is not accepted)' : '';
    return reject('missing_signature', `X-Hub-Signature-256 is required${hint}`);
  }
  const deliveryId = header(req, DELIVERY);
  if (deliveryId === undefined) return reject('missing_id', 'X-GitHub-Delivery is required');
  if (!signature.startsWith(PREFIX)) {
    return reject('bad_signature', 'X-Hub-Signature-256 must be "sha256=" followed by hex');
  }
  const received = signature.slice(PREFIX.length).toLowerCase();
  const expected = secrets.map((s) => createHmac('sha256', s).update(req.body).digest('hex'));
  if (!matchesAny(received, expected)) {
    return reject('bad_signature', 'X-Hub-Signature-256 does not match the body');
  }

  const text = bodyText(req.body);
  // A hook configured with content type "application/x-www-form-urlencoded" sends `payload=<json>`.
  const form = text.startsWith('payload=') ? parseForm(text).payload : undefined;
  const parsed = parseJson(form ?? text);
  if (!parsed.ok) return parsed.rejected;
  return { kind: 'ok', deliveryId, eventName: header(req, EVENT) ?? null, payload: parsed.value };
}

export function githubBinding(payload: unknown): Record<string, string> {
  if (!isRecord(payload)) return {};
  return bindings({
    installation_id: pick(payload, 'installation', 'id'),
    repository: pick(payload, 'repository', 'full_name'),
    organization: pick(payload, 'organization', 'login'),
  });
}

/**
 * GitHub's revision of the object an event is about: its `updated_at`. Each event name is its own
 * resource (a review is not a state of the pull request it names). A pull request's `head.sha` is the
 * tag shown beside it. Other events (push, workflow runs, …) carry no revision and are never dropped.
 */
const GITHUB_ORDERED: Readonly<Record<string, (p: unknown) => Revision | undefined>> = {
  pull_request: (p) =>
    revisionOf(
      key('pull_request', p, pick(p, 'pull_request', 'number')),
      stampMs(pick(p, 'pull_request', 'updated_at')),
      pick(p, 'pull_request', 'head', 'sha'),
    ),
  issues: (p) =>
    revisionOf(key('issues', p, pick(p, 'issue', 'number')), stampMs(pick(p, 'issue', 'updated_at'))),
  issue_comment: (p) =>
    revisionOf(key('issue_comment', p, pick(p, 'comment', 'id')), stampMs(pick(p, 'comment', 'updated_at'))),
  pull_request_review_comment: (p) =>
    revisionOf(
      key('pull_request_review_comment', p, pick(p, 'comment', 'id')),
      stampMs(pick(p, 'comment', 'updated_at')),
    ),
};

function key(event: string, payload: unknown, id: string | undefined): string | undefined {
  const repo = pick(payload, 'repository', 'full_name');
  return repo === undefined || id === undefined ? undefined : `${event}:${repo}#${id}`;
}

export function githubRevision(accepted: Accepted): Revision | undefined {
  const read = accepted.eventName === null ? undefined : GITHUB_ORDERED[accepted.eventName];
  return read?.(accepted.payload);
}

export const github: SourceKind<GithubConfig> = {
  type: 'github',
  configSchema: githubConfig,
  create(config, lookup): Source {
    const secrets = resolveSecrets(config.secret_env, config.secret, lookup, 'github secret');
    return {
      type: 'github',
      verify: (req) => verifyGithub(req, secrets),
      tenantBinding: githubBinding,
      revision: githubRevision,
    };
  },
};
