import { describe, expect, it } from 'vitest';
import type { SigningKeys } from './keys.js';
import { PREPARED_FRESH_MS, PreparedPushes, type PushPayload } from './push.js';
import type * as q from './sql.js';

const config = (over: Partial<q.PushConfigRow> = {}): q.PushConfigRow => ({
  task_id: 'task-1',
  id: 'cfg-1',
  url: 'https://receiver.example/hook',
  token: 'tok',
  auth_scheme: null,
  auth_ref: null,
  wire_version: '1.0',
  created_at: 0,
  ...over,
});
const payload: PushPayload = { eventId: 'evt_1', taskId: 'task-1', configId: 'cfg-1', body: '{}' };

function prepared(now: { t: number }, signed: string[]) {
  const keys = {
    sign: async (c: { eventId: string; audience: string }) => {
      signed.push(`${c.eventId} ${c.audience}`);
      return 'jwt';
    },
  } as unknown as SigningKeys;
  return new PreparedPushes({ db: undefined as never, vault: undefined as never, keys, now: () => now.t });
}

describe('pushes prepared at their enqueue', () => {
  it('hands the first send the config as read and headers signed on the next turn, once', async () => {
    const now = { t: 1_000 };
    const signed: string[] = [];
    const p = prepared(now, signed);
    p.keep(payload, config());
    expect(signed).toEqual([]); // not in the enqueuing transaction: on the next turn of the loop
    const taken = p.take(payload);
    expect(taken?.url).toBe('https://receiver.example/hook');
    expect(await taken?.headers).toEqual({
      'content-type': 'application/a2a+json',
      'x-switchboard-event-id': 'evt_1',
      authorization: 'Bearer jwt',
      'x-a2a-notification-token': 'tok',
    });
    expect(signed).toEqual(['evt_1 https://receiver.example/hook']);
    expect(p.take(payload)).toBeUndefined(); // a retry reads the config and signs again
  });

  it('does not hand over a push prepared longer ago than PREPARED_FRESH_MS', () => {
    const now = { t: 1_000 };
    const p = prepared(now, []);
    p.keep(payload, config());
    now.t += PREPARED_FRESH_MS + 1;
    expect(p.take(payload)).toBeUndefined();
  });

  it('prepares nothing for a config with its own authentication (its credentials are in the vault)', () => {
    const p = prepared({ t: 1_000 }, []);
    p.keep(payload, config({ auth_scheme: 'Basic', auth_ref: 'vlt_1' }));
    expect(p.take(payload)).toBeUndefined();
  });

  it('keeps another event or config apart', () => {
    const p = prepared({ t: 1_000 }, []);
    p.keep(payload, config());
    expect(p.take({ ...payload, configId: 'cfg-2' })).toBeUndefined();
    expect(p.take({ ...payload, eventId: 'evt_2' })).toBeUndefined();
    expect(p.take(payload)).toBeDefined();
  });
});
