import { z } from 'zod';
import type { Accepted, InboundRequest, Revision, Source, SourceKind, VerifyResult } from '../../source.js';
import { matchesAny } from '../common/compare.js';
import {
  bindings,
  bodyText,
  contentId,
  header,
  isRecord,
  parseJson,
  pick,
  reject,
} from '../common/request.js';
import { revisionOf, stampMs } from '../common/revision.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';

// docs.gitlab.com user/project/integrations/webhooks: "Secret token" arrives verbatim in X-Gitlab-Token.
const TOKEN = 'x-gitlab-token';
const EVENT = 'x-gitlab-event';
/** Kept on retries and manual resends (recent GitLab); the best dedup key GitLab sends. */
const IDEMPOTENCY_KEY = 'idempotency-key';
const EVENT_UUID = 'x-gitlab-event-uuid';

export const gitlabConfig = z
  .strictObject({
    type: z.literal('gitlab'),
    /** The webhook's "Secret token". */
    secret_env: secretEnvField.optional(),
    secret: secretLiteralField.optional(),
  })
  .superRefine((v, ctx) => checkSecretPair(v, ctx, 'secret'));

export type GitlabConfig = z.infer<typeof gitlabConfig>;

/**
 * GitLab sends a shared token, not a signature over the body, and no timestamp: the token proves the
 * sender knows the secret, and the dedup key is all that stops a replay.
 */
export function verifyGitlab(req: InboundRequest, tokens: readonly string[]): VerifyResult {
  const token = header(req, TOKEN);
  if (token === undefined) return reject('missing_signature', 'X-Gitlab-Token is required');
  if (!matchesAny(token, tokens)) return reject('bad_signature', 'X-Gitlab-Token does not match');

  const parsed = parseJson(bodyText(req.body));
  if (!parsed.ok) return parsed.rejected;
  // Older GitLab sends no Idempotency-Key; a digest of the body is then the same on a retry.
  const deliveryId = header(req, IDEMPOTENCY_KEY) ?? header(req, EVENT_UUID) ?? contentId(req.body);
  const eventName = header(req, EVENT) ?? pick(parsed.value, 'object_kind') ?? null;
  return { kind: 'ok', deliveryId, eventName, payload: parsed.value };
}

export function gitlabBinding(payload: unknown): Record<string, string> {
  if (!isRecord(payload)) return {};
  return bindings({
    project: pick(payload, 'project', 'path_with_namespace'),
    project_id: pick(payload, 'project', 'id') ?? pick(payload, 'project_id'),
  });
}

/**
 * GitLab's revision: `object_attributes.updated_at` of the object the hook is about (merge request,
 * issue, note), keyed by `object_kind`, project id and the object's `iid` (else `id`).
 */
export function gitlabRevision(accepted: Accepted): Revision | undefined {
  const p = accepted.payload;
  const kind = pick(p, 'object_kind');
  const project = pick(p, 'project', 'id') ?? pick(p, 'project_id');
  const id = pick(p, 'object_attributes', 'iid') ?? pick(p, 'object_attributes', 'id');
  const resource = kind && project && id ? `${kind}:${project}#${id}` : undefined;
  return revisionOf(resource, stampMs(pick(p, 'object_attributes', 'updated_at')));
}

export const gitlab: SourceKind<GitlabConfig> = {
  type: 'gitlab',
  configSchema: gitlabConfig,
  create(config, lookup): Source {
    const tokens = resolveSecrets(config.secret_env, config.secret, lookup, 'gitlab secret token');
    return {
      type: 'gitlab',
      verify: (req) => verifyGitlab(req, tokens),
      tenantBinding: gitlabBinding,
      revision: gitlabRevision,
    };
  },
};
