import type { Lookup } from './lookup.js';

/**
 * Feishu app mode: `im/v1/messages` keeps a send's `uuid` for an hour and posts a repeated one at most
 * once (the uuid is derived from the event and the receiver, channels/feishu/format.ts), so within that
 * hour of the delivery's creation the same request is safe to send again: the platform itself settles
 * it. After the hour, or through a custom-bot webhook (no uuid, no read API), a person decides.
 */
export const FEISHU_UUID_WINDOW_MS = 60 * 60_000;
/** Margin under the hour: the resend must reach Feishu while the first send's uuid is still kept. */
const FEISHU_MARGIN_MS = 5 * 60_000;

export const feishuLookup: Lookup = async (row, config, deps) => {
  if (config['app'] === undefined)
    return { kind: 'unsettled', why: 'feishu: a custom-bot webhook cannot be read back or de-duplicated' };
  const age = deps.now() - Number(row.created_at);
  if (age < FEISHU_UUID_WINDOW_MS - FEISHU_MARGIN_MS)
    return { kind: 'resend', why: 'feishu: the same uuid within the hour is posted at most once' };
  return { kind: 'unsettled', why: 'feishu: older than the hour Feishu keeps a uuid' };
};

/**
 * Telegram: the Bot API has no method that finds a message the bot sent (no history, no search; only
 * updates sent to the bot), so an unknown send cannot be settled by asking. A person decides.
 */
export const telegramLookup: Lookup = async () => ({
  kind: 'unsettled',
  why: 'telegram: the Bot API cannot look up a sent message',
});
