import { afterEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, NOW, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { telegram } from './index.js';

const TOKEN = '110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const body = (r: HttpRequest) => JSON.parse(r.body) as Record<string, unknown>;
type Button = { text: string; callback_data?: string; url?: string };

channelCase({
  kind: telegram,
  rawConfig: { type: 'telegram', token_env: 'TG_TOKEN', chat_id: -1001234567890 },
  rawMentionConfig: {
    type: 'telegram',
    token_env: 'TG_TOKEN',
    chat_id: -1001234567890,
    mention_username: 'owner_bob',
  },
  secrets: { TG_TOKEN: TOKEN },
  text: (r) => String(body(r)['text']),
  wire: (r) => r.body,
  buttons: (r) => {
    const rows = (body(r)['reply_markup'] as { inline_keyboard: Button[][] } | undefined)?.inline_keyboard;
    const [a, b] = rows?.[0] ?? [];
    return a?.callback_data && b?.callback_data
      ? { approve: a.callback_data, reject: b.callback_data }
      : undefined;
  },
  mentions: (r) => String(body(r)['text']).includes('@owner_bob'),
  responses: {
    ok: response(200, { ok: true, result: { message_id: 42, chat: { id: -1001234567890 }, date: 1 } }),
    business: response(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' }),
    businessExpect: 'dead',
    rateLimited: response(429, {
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 7',
      parameters: { retry_after: 7 },
    }),
    rateLimitedRetryAfterMs: 7000,
    serverError: response(502, { ok: false, error_code: 502, description: 'Bad Gateway' }),
  },
});

/** sendMessage as the Bot API checks it: token, chat, text 1-4096, inline buttons with exactly one of url / callback_data (1-64 bytes). */
function botApi(req: ReceivedRequest): Answer {
  if (req.url !== `/bot${TOKEN}/sendMessage`)
    return json(401, { ok: false, error_code: 401, description: 'Unauthorized' });
  const m = JSON.parse(req.body) as {
    chat_id: number;
    text?: string;
    reply_markup?: { inline_keyboard: Button[][] };
  };
  if (m.chat_id === -1)
    return json(429, {
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 3',
      parameters: { retry_after: 3 },
    });
  if (m.chat_id !== -1001234567890)
    return json(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
  if (!m.text || m.text.length > 4096)
    return json(400, { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
  for (const row of m.reply_markup?.inline_keyboard ?? []) {
    for (const b of row) {
      const kinds = [b.url, b.callback_data].filter((v) => v !== undefined).length;
      const dataOk =
        b.callback_data === undefined ||
        (Buffer.byteLength(b.callback_data) >= 1 && Buffer.byteLength(b.callback_data) <= 64);
      if (!b.text || kinds !== 1 || !dataOk)
        return json(400, { ok: false, error_code: 400, description: 'Bad Request: BUTTON_DATA_INVALID' });
    }
  }
  return json(200, { ok: true, result: { message_id: 7, chat: { id: m.chat_id }, date: 1, text: m.text } });
}

describe('Telegram against a local Bot API stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const cfg = (chat_id: number) =>
    telegram.configSchema.parse({ type: 'telegram', token_env: 'TG_TOKEN', chat_id, api_url: rx.url });
  const deps = { post: fetchPost, now: () => NOW, secret: () => TOKEN };

  it('sends a 4096-character-capped message with callback buttons and gets the message id', async () => {
    rx = await startReceiver(botApi);
    const res = await telegram.send(
      approvalMessage({ detail: '长'.repeat(6000) }),
      cfg(-1001234567890),
      deps,
    );
    expect(res).toEqual({ kind: 'ok', providerId: '7' });
    const sent = JSON.parse(rx.requests[0]?.body ?? '{}');
    expect(sent.reply_markup.inline_keyboard[0][0].callback_data).toBe(
      'sb:approve:apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
    );
    expect(sent.parse_mode).toBeUndefined();
  });

  it('maps chat not found to dead and a flood limit to retry after parameters.retry_after', async () => {
    rx = await startReceiver(botApi);
    expect((await telegram.send(sampleMessage(), cfg(-42), deps)).kind).toBe('dead');
    expect(await telegram.send(sampleMessage(), cfg(-1), deps)).toMatchObject({
      kind: 'retry',
      retryAfterMs: 3000,
    });
  });

  it('treats a wrong bot token as dead without putting the token in the reason', async () => {
    rx = await startReceiver(botApi);
    const res = await telegram.send(sampleMessage(), cfg(-1001234567890), {
      ...deps,
      secret: () => '1:wrong',
    });
    expect(res).toEqual({ kind: 'dead', reason: 'telegram 401: Unauthorized' });
  });

  it('keeps @names written by the agent from pinging anyone', () => {
    rx = { url: 'http://127.0.0.1:1', requests: [], close: async () => {} };
    const req = telegram.format(sampleMessage({ summary: 'ask @alice_b' }), cfg(1), {
      now: NOW,
      secret: () => TOKEN,
    });
    expect(body(req)['text']).toContain('@\u200balice_b');
  });
});
