import { describe, expect, it } from 'vitest';
import { sampleMessage } from './channel.case.js';
import { CHANNEL_KINDS, channelKind } from './index.js';

describe('the channel registry', () => {
  it('holds the ten kinds of issue 6, each under its own type', () => {
    expect(Object.keys(CHANNEL_KINDS).sort()).toEqual(
      [
        'alertmanager',
        'dingtalk',
        'discord',
        'email',
        'feishu',
        'ntfy',
        'slack',
        'telegram',
        'webhook',
        'wecom',
      ].sort(),
    );
    for (const [type, kind] of Object.entries(CHANNEL_KINDS)) expect(kind.type).toBe(type);
  });

  it('finds a kind by a config type and nothing for inherited names', () => {
    expect(channelKind('ntfy')?.type).toBe('ntfy');
    expect(channelKind('constructor')).toBeUndefined();
    expect(channelKind('toString')).toBeUndefined();
  });

  it('parses the config example from CONTRACT.md and sends through an erased kind', async () => {
    const kind = channelKind('ntfy');
    const config = kind?.configSchema.parse({
      type: 'ntfy',
      url: 'https://ntfy.example',
      topic: 'agents',
      token_env: 'NTFY_TOKEN',
    });
    const post = async () => ({ status: 200, headers: {}, body: '{"id":"x1","event":"message"}' });
    const res = await kind?.send(sampleMessage(), config, { post, now: () => 0, secret: () => 'tk_x' });
    expect(res).toEqual({ kind: 'ok', providerId: 'x1' });
  });

  it('rejects a config whose type belongs to another kind', () => {
    expect(
      CHANNEL_KINDS.slack.configSchema.safeParse({ type: 'ntfy', url: 'https://ntfy.example', topic: 'a' })
        .success,
    ).toBe(false);
  });
});
