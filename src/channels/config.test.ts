import { describe, expect, it } from 'vitest';
import { checkChannels, parseChannels } from './config.js';

describe('checkChannels', () => {
  it('accepts the channels of the CONTRACT.md example', () => {
    const channels = {
      phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents', token_env: 'NTFY_TOKEN' },
      hook: { type: 'webhook', url: 'https://example.com/hook', secret_env: 'HOOK_SECRET' },
    };
    expect(checkChannels(channels)).toEqual([]);
    expect(parseChannels(channels).map((c) => [c.name, c.kind.type])).toEqual([
      ['phone', 'ntfy'],
      ['hook', 'webhook'],
    ]);
  });

  it('names the key path of every problem, unknown keys and types included', () => {
    const problems = checkChannels({
      phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'bad topic!', token: 'tk_literal' },
      chat: { type: 'teams' },
    });
    expect(problems.map((p) => p.path)).toEqual([
      'channels.phone.topic',
      'channels.phone.token',
      'channels.chat.type',
    ]);
    expect(problems[2]?.message).toContain('use one of ntfy, feishu');
  });
});
