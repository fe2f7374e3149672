import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { telegram, telegramBinding } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

const bytes = (s: string) => new TextEncoder().encode(s);
const TOKENS = ['old_Token-1', 'new_Token-2'];
const source = telegram.create({ type: 'telegram', secret: TOKENS }, () => undefined);

function request(token: string, update: unknown): InboundRequest {
  return {
    headers: { 'x-telegram-bot-api-secret-token': token },
    body: bytes(JSON.stringify(update)),
    now: 0,
  };
}

const message = (updateId: number) => ({
  update_id: updateId,
  message: { message_id: 5, chat: { id: -100123, type: 'group' }, from: { id: 77 }, text: 'hi' },
});

runSourceCase('telegram', {
  source,
  secrets: TOKENS,
  signsBody: false,
  headers: { signature: 'x-telegram-bot-api-secret-token' },
  sign(now, { deliveryId, secretIndex = 0, foreignSecret }) {
    const token = foreignSecret ? 'someone_elses_token' : (TOKENS[secretIndex] ?? '');
    // The checklist's ids are text; Telegram's update_id is an integer, so the case maps one to the other.
    return { ...request(token, message(Number(deliveryId.replace(/\D/g, '')))), now };
  },
  reportsDeliveryId: false,
});

describe('telegram specifics', () => {
  it('uses update_id as the delivery id and the update kind as the event name', () => {
    expect(source.verify(request(TOKENS[0] ?? '', message(901)))).toMatchObject({
      kind: 'ok',
      deliveryId: '901',
      eventName: 'message',
    });
    const callback = {
      update_id: 902,
      callback_query: { id: 'cq', from: { id: 8 }, message: { chat: { id: 3 } } },
    };
    const result = source.verify(request(TOKENS[1] ?? '', callback));
    expect(result).toMatchObject({ kind: 'ok', eventName: 'callback_query' });
    expect(result.kind === 'ok' && telegramBinding(result.payload)).toEqual({ chat_id: '3', user_id: '8' });
  });

  it('refuses a body that is not an Update, after the token holds', () => {
    expect(source.verify(request(TOKENS[0] ?? '', { message: {} }))).toMatchObject({ reason: 'malformed' });
    expect(source.verify(request('wrong', { message: {} }))).toMatchObject({ reason: 'bad_signature' });
  });

  it('accepts the whole secret_token charset and length, and refuses anything else in config', () => {
    const ok = 'A'.repeat(200) + 'az09_-';
    expect(telegram.configSchema.safeParse({ type: 'telegram', secret: ok }).success).toBe(true);
    for (const bad of ['', 'has space', 'x'.repeat(257), 'semi;colon']) {
      expect(telegram.configSchema.safeParse({ type: 'telegram', secret: bad }).success, bad).toBe(false);
    }
  });

  it('refuses an environment token outside the charset at start-up, without echoing it', () => {
    const create = () => telegram.create({ type: 'telegram', secret_env: 'TG' }, () => 'bad token!');
    expect(create).toThrow(/secret_token must be/);
    expect(create).not.toThrow(/bad token!/);
  });

  it('binds the chat and the sender', () => {
    expect(telegramBinding(message(1))).toEqual({ chat_id: '-100123', user_id: '77' });
  });
});
