import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { InboundRequest, Source, SourceKind, VerifyResult } from '../../source.js';
import { matchesAny } from '../common/compare.js';
import {
  bindings,
  bodyText,
  contentId,
  header,
  isRecord,
  parseForm,
  parseJson,
  pick,
  reject,
  signedBytes,
} from '../common/request.js';
import { checkSecretPair, resolveSecrets, secretEnvField, secretLiteralField } from '../common/secrets.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS } from '../common/timestamp.js';

// https://api.slack.com/authentication/verifying-requests-from-slack
const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';
const VERSION = 'v0';

export const slackConfig = z
  .strictObject({
    type: z.literal('slack'),
    /** The app's signing secret (not the legacy verification token). */
    secret_env: secretEnvField.optional(),
    secret: secretLiteralField.optional(),
    tolerance_seconds: z.number().int().min(1).max(MAX_TOLERANCE_SECONDS).default(DEFAULT_TOLERANCE_SECONDS),
  })
  .superRefine((v, ctx) => checkSecretPair(v, ctx, 'secret'));

export type SlackConfig = z.infer<typeof slackConfig>;

/**
 * Events API bodies are JSON; slash commands and interactivity are forms, the latter with the JSON
 * in a `payload` field. All three are signed the same way over the raw bytes.
 */
function readBody(text: string) {
  if (text.trimStart().startsWith('{')) return parseJson(text);
  const form = parseForm(text);
  if (typeof form.payload === 'string') return parseJson(form.payload, 'payload field');
  return { ok: true as const, value: form as unknown };
}

function eventName(payload: Record<string, unknown>): string | null {
  if (payload.type === 'event_callback') return pick(payload, 'event', 'type') ?? 'event_callback';
  if (typeof payload.type === 'string') return payload.type;
  if (typeof payload.command === 'string') return 'slash_command';
  return null;
}

export function verifySlack(
  req: InboundRequest,
  secrets: readonly string[],
  toleranceSeconds: number,
): VerifyResult {
  const signature = header(req, SIGNATURE);
  if (signature === undefined) return reject('missing_signature', 'X-Slack-Signature is required');
  const timestamp = header(req, TIMESTAMP);
  if (timestamp === undefined) return reject('missing_timestamp', 'X-Slack-Request-Timestamp is required');
  const fresh = checkTimestamp(timestamp, 'X-Slack-Request-Timestamp', req.now, toleranceSeconds);
  if (!fresh.ok) return fresh.rejected;
  if (!signature.startsWith(`${VERSION}=`)) {
    return reject('bad_signature', 'X-Slack-Signature must be "v0=" followed by hex');
  }

  const base = signedBytes(`${VERSION}:${timestamp}:`, req.body);
  const expected = secrets.map((s) => createHmac('sha256', s).update(base).digest('hex'));
  if (!matchesAny(signature.slice(VERSION.length + 1).toLowerCase(), expected)) {
    return reject('bad_signature', 'X-Slack-Signature does not match the body and timestamp');
  }

  const parsed = readBody(bodyText(req.body));
  if (!parsed.ok) return parsed.rejected;
  const payload = parsed.value;
  if (!isRecord(payload)) return reject('malformed', 'the body is not an object');

  // Answered only now that the signature holds: Slack signs its handshake like any other request.
  if (payload.type === 'url_verification' && typeof payload.challenge === 'string') {
    return {
      kind: 'challenge',
      response: { status: 200, body: { challenge: payload.challenge }, contentType: 'application/json' },
    };
  }
  if (payload.ssl_check === '1') return { kind: 'challenge', response: { status: 200, body: '' } };

  // `event_id` is kept on Slack's retries; forms carry a `trigger_id`; failing both, the signed bytes.
  const deliveryId =
    pick(payload, 'event_id') ?? pick(payload, 'trigger_id') ?? contentId(`${timestamp}:`, req.body);
  return { kind: 'ok', deliveryId, eventName: eventName(payload), timestamp: fresh.ms, payload };
}

export function slackBinding(payload: unknown): Record<string, string> {
  return bindings({
    team_id: pick(payload, 'team_id') ?? pick(payload, 'team', 'id'),
    enterprise_id: pick(payload, 'enterprise_id') ?? pick(payload, 'enterprise', 'id'),
    api_app_id: pick(payload, 'api_app_id'),
  });
}

export const slack: SourceKind<SlackConfig> = {
  type: 'slack',
  configSchema: slackConfig,
  create(config, lookup): Source {
    const secrets = resolveSecrets(config.secret_env, config.secret, lookup, 'slack signing secret');
    return {
      type: 'slack',
      verify: (req) => verifySlack(req, secrets, config.tolerance_seconds),
      tenantBinding: slackBinding,
    };
  },
};
