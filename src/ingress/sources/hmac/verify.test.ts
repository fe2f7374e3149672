import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { hmac } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

const bytes = (s: string) => new TextEncoder().encode(s);
const create = (raw: Record<string, unknown>) =>
  hmac.create(hmac.configSchema.parse({ type: 'hmac', ...raw }), () => undefined);

const SECRETS = ['first-secret', 'second-secret'];
const BODY = JSON.stringify({ type: 'order.created', id: 'o_1' });

runSourceCase('hmac with id, timestamp and prefix', {
  source: create({
    secret: SECRETS,
    header: 'X-Signature',
    prefix: 'sha256=',
    id_header: 'X-Delivery',
    timestamp_header: 'X-Timestamp',
    signed_payload: '{id}.{timestamp}.{body}',
  }),
  secrets: SECRETS,
  signsBody: true,
  headers: { signature: 'x-signature', id: 'x-delivery', timestamp: 'x-timestamp' },
  sign(now, { at = now, deliveryId, secretIndex = 0, foreignSecret }) {
    const secret = foreignSecret ? 'unknown' : (SECRETS[secretIndex] ?? '');
    const ts = String(Math.floor(at / 1000));
    const hex = createHmac('sha256', secret).update(`${deliveryId}.${ts}.${BODY}`).digest('hex');
    return {
      headers: { 'x-signature': `sha256=${hex}`, 'x-delivery': deliveryId, 'x-timestamp': ts },
      body: bytes(BODY),
      now,
    };
  },
});

runSourceCase('hmac with only a base64 SHA-512 body signature', {
  source: create({ secret: SECRETS, header: 'X-Sig', algorithm: 'sha512', encoding: 'base64' }),
  secrets: SECRETS,
  signsBody: true,
  reportsDeliveryId: false,
  headers: { signature: 'x-sig' },
  sign(now, { deliveryId, secretIndex = 0, foreignSecret }) {
    const secret = foreignSecret ? 'unknown' : (SECRETS[secretIndex] ?? '');
    const body = JSON.stringify({ id: deliveryId });
    return {
      headers: { 'x-sig': createHmac('sha512', secret).update(body).digest('base64') },
      body: bytes(body),
      now,
    };
  },
});

describe('hmac configured as other schemes reproduces their published vectors', () => {
  it('verifies GitHub vector 1b when configured as GitHub', () => {
    const source = create({ secret: 'mysecret', header: 'X-Hub-Signature-256', prefix: 'sha256=' });
    const req: InboundRequest = {
      headers: {
        'x-hub-signature-256': 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3',
      },
      body: bytes('{"foo":"bar"}'),
      now: 0,
    };
    expect(source.verify(req)).toMatchObject({ kind: 'ok', payload: { foo: 'bar' } });
  });

  it('verifies Slack vector 3a when configured as Slack (then refuses the form body as not JSON)', () => {
    const source = create({
      secret: '8f742231b10e8888abcd99yyyzzz85a5',
      header: 'X-Slack-Signature',
      prefix: 'v0=',
      timestamp_header: 'X-Slack-Request-Timestamp',
      signed_payload: 'v0:{timestamp}:{body}',
    });
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const req = (text: string): InboundRequest => ({
      headers: {
        'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
        'x-slack-request-timestamp': '1531420618',
      },
      body: bytes(text),
      now: 1531420618_000,
    });
    expect(source.verify(req(body))).toMatchObject({ kind: 'rejected', reason: 'malformed' });
    expect(source.verify(req(`${body}&`))).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
  });
});

describe('hmac specifics', () => {
  it('reads timestamps in milliseconds when told to', () => {
    const source = create({
      secret: 's',
      header: 'X-Sig',
      timestamp_header: 'X-Ts',
      timestamp_unit: 'ms',
      signed_payload: '{timestamp},{body}',
    });
    const now = 1_700_000_000_123;
    const sig = createHmac('sha256', 's').update(`${now},${BODY}`).digest('hex');
    const req = { headers: { 'x-sig': sig, 'x-ts': String(now) }, body: bytes(BODY), now };
    expect(source.verify(req)).toMatchObject({ kind: 'ok', timestamp: now, eventName: 'order.created' });
    expect(source.verify({ ...req, now: now + 301_000 })).toMatchObject({ reason: 'timestamp_too_old' });
  });

  it('takes the event name from the configured header', () => {
    const source = create({ secret: 's', header: 'X-Sig', event_header: 'X-Event' });
    const sig = createHmac('sha256', 's').update(BODY).digest('hex');
    expect(
      source.verify({ headers: { 'x-sig': sig, 'x-event': 'ping' }, body: bytes(BODY), now: 0 }),
    ).toMatchObject({
      eventName: 'ping',
    });
  });

  it('refuses configs whose template and headers disagree', () => {
    const parse = (raw: Record<string, unknown>) =>
      hmac.configSchema.safeParse({ type: 'hmac', secret: 's', header: 'X-Sig', ...raw }).success;
    expect(parse({})).toBe(true);
    expect(parse({ signed_payload: '{timestamp}.{body}' })).toBe(false);
    expect(parse({ timestamp_header: 'X-Ts' })).toBe(false);
    expect(parse({ signed_payload: '{id}.{body}' })).toBe(false);
    expect(parse({ signed_payload: '{body}{body}' })).toBe(false);
    expect(parse({ signed_payload: 'no body' })).toBe(false);
    expect(parse({ algorithm: 'md5' })).toBe(false);
    expect(parse({ header: 'bad header' })).toBe(false);
  });
});
