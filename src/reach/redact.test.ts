import { describe, expect, it } from 'vitest';
import { PII_KINDS } from './config.js';
import { luhn, redactText, redactValue, validIdCard } from './redact.js';
import { cardNumber, idCard } from './testing.js';

const ALL = PII_KINDS;

describe('ID card numbers', () => {
  it('accepts the GB 11643 sample and rejects it with a wrong check character', () => {
    expect(validIdCard('11010519491231002X')).toBe(true);
    expect(validIdCard('110105194912310021')).toBe(false);
    expect(validIdCard('11010519491231002x')).toBe(true);
  });

  it('rejects a date that does not exist even when the checksum is computed for it', () => {
    expect(validIdCard(idCard('440301', '19900230', '123'))).toBe(false);
    expect(validIdCard(idCard('440301', '19920229', '123'))).toBe(true);
    expect(validIdCard(idCard('440301', '19910229', '123'))).toBe(false);
  });

  it('redacts a valid one in text and leaves an 18-digit order number with a bad check digit', () => {
    const valid = idCard('310104', '19851107', '452');
    const bad = `${valid.slice(0, 17)}${valid[17] === '0' ? '1' : '0'}`;
    const out = redactText(`reporter ${valid}, order ${bad}`, ALL);
    expect(out).toBe(`reporter [redacted:cn_id_card], order ${bad}`);
  });
});

describe('bank card numbers', () => {
  it('runs the Luhn check on known test numbers', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(luhn('79927398713')).toBe(true);
  });

  it('redacts a UnionPay number that passes Luhn, with or without spaces, and not one that fails', () => {
    const card = cardNumber('622202123456789012');
    const spaced = card.replace(/(\d{4})(?=\d)/g, '$1 ');
    const wrong = `${card.slice(0, -1)}${(Number(card.at(-1)) + 1) % 10}`;
    expect(redactText(`card ${card}`, ['bank_card'])).toBe('card [redacted:bank_card]');
    expect(redactText(`card ${spaced}`, ['bank_card'])).toBe('card [redacted:bank_card]');
    expect(redactText(`card ${wrong}`, ['bank_card'])).toBe(`card ${wrong}`);
  });

  it('leaves millisecond timestamps alone even when they happen to pass Luhn', () => {
    const stamps = Array.from({ length: 50 }, (_, i) => String(1718000000000 + i * 7));
    expect(stamps.some((s) => luhn(s))).toBe(true);
    const text = stamps.join(' ');
    expect(redactText(text, ALL)).toBe(text);
  });
});

describe('mainland mobile numbers and emails', () => {
  it('redacts the common spellings of a mobile number', () => {
    for (const s of ['13800138000', '139 1234 5678', '186-1234-5678', '+86 186 1234 5678', '+8613800138000'])
      expect(redactText(`call ${s} now`, ['cn_mobile'])).toBe('call [redacted:cn_mobile] now');
  });

  it('does not take eleven digits out of a longer number, nor a landline', () => {
    expect(redactText('ref 213800138000123', ['cn_mobile'])).toBe('ref 213800138000123');
    expect(redactText('tel 010-62345678', ['cn_mobile'])).toBe('tel 010-62345678');
    expect(redactText('ticket 12345678901', ['cn_mobile'])).toBe('ticket 12345678901');
  });

  it('redacts email addresses', () => {
    expect(redactText('cc zhang.wei+ops@corp.example.cn', ['email'])).toBe('cc [redacted:email]');
  });

  it('redacts only the kinds it is asked for', () => {
    expect(redactText('13800138000 a@b.io', ['email'])).toBe('13800138000 [redacted:email]');
  });
});

describe('values', () => {
  it('redacts every string and PII-shaped integer in a nested value and counts each kind', () => {
    const counts = {};
    const out = redactValue(
      {
        rows: [{ phone: 13800138000, note: `id ${idCard('110105', '19491231', '002')}`, n: 42 }],
        by: 'x@y.com',
      },
      ALL,
      counts,
    );
    expect(out).toEqual({
      rows: [{ phone: '[redacted:cn_mobile]', note: 'id [redacted:cn_id_card]', n: 42 }],
      by: '[redacted:email]',
    });
    expect(counts).toEqual({ cn_mobile: 1, cn_id_card: 1, email: 1 });
  });
});
