import { z } from 'zod';
import {
  type InboundRequest,
  type Source,
  SourceConfigError,
  type SourceKind,
  type VerifyResult,
} from '../../source.js';
import { matchesAny } from '../common/compare.js';
import { bindings, bodyText, header, isRecord, parseJson, pick, reject } from '../common/request.js';
import { checkSecretPair, oneOrMany, resolveSecrets, secretEnvField } from '../common/secrets.js';

// https://core.telegram.org/bots/api#setwebhook: `secret_token` comes back verbatim in this header.
const TOKEN = 'x-telegram-bot-api-secret-token';
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,256}$/;
const TOKEN_RULE = 'must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram secret_token)';

export const telegramConfig = z
  .strictObject({
    type: z.literal('telegram'),
    /** The `secret_token` given to setWebhook. */
    secret_env: secretEnvField.optional(),
    secret: oneOrMany(z.string().regex(TOKEN_SHAPE, TOKEN_RULE)).optional(),
  })
  .superRefine((v, ctx) => checkSecretPair(v, ctx, 'secret'));

export type TelegramConfig = z.infer<typeof telegramConfig>;

/** The keys of an Update that are not its kind: the first other key names the update (`message`, …). */
function updateKind(update: Record<string, unknown>): string | null {
  return Object.keys(update).find((k) => k !== 'update_id') ?? null;
}

/**
 * Telegram sends a shared token, not a signature: nothing binds it to the body or a time, so the
 * only replay guard is `update_id` as the dedup key. Compared in constant time like any secret.
 */
export function verifyTelegram(req: InboundRequest, tokens: readonly string[]): VerifyResult {
  const token = header(req, TOKEN);
  if (token === undefined) return reject('missing_signature', 'X-Telegram-Bot-Api-Secret-Token is required');
  if (!matchesAny(token, tokens))
    return reject('bad_signature', 'X-Telegram-Bot-Api-Secret-Token does not match');

  const parsed = parseJson(bodyText(req.body));
  if (!parsed.ok) return parsed.rejected;
  const update = parsed.value;
  if (!isRecord(update) || !Number.isSafeInteger(update.update_id)) {
    return reject('malformed', 'the body is not a Telegram Update (no integer update_id)');
  }
  return { kind: 'ok', deliveryId: String(update.update_id), eventName: updateKind(update), payload: update };
}

export function telegramBinding(payload: unknown): Record<string, string> {
  if (!isRecord(payload)) return {};
  const kind = updateKind(payload);
  const inner = kind === null ? undefined : payload[kind];
  return bindings({
    chat_id: pick(inner, 'chat', 'id') ?? pick(inner, 'message', 'chat', 'id'),
    user_id: pick(inner, 'from', 'id'),
  });
}

export const telegram: SourceKind<TelegramConfig> = {
  type: 'telegram',
  configSchema: telegramConfig,
  create(config, lookup): Source {
    const tokens = resolveSecrets(config.secret_env, config.secret, lookup, 'telegram secret_token');
    if (!tokens.every((t) => TOKEN_SHAPE.test(t))) {
      throw new SourceConfigError(`telegram secret_token ${TOKEN_RULE}`);
    }
    return { type: 'telegram', verify: (req) => verifyTelegram(req, tokens), tenantBinding: telegramBinding };
  },
};
