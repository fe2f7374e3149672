import { describe, expect, it } from 'vitest';
import { compileEgressPolicy } from '../egress/index.js';
import { blockedTarget, channelTargets, judgeChannelUrls } from './targets.js';

const env: Record<string, string> = {
  DISCORD_URL: 'file:///etc/passwd',
  SLACK_URL: 'https://hooks.slack.com/services/T/B/x',
};
const secret = (k: string) => env[k];
const policy = compileEgressPolicy([], {
  resolve: async (host) => [
    { address: host === 'inside.example.com' ? '10.1.2.3' : '93.184.216.34', family: 4 },
  ],
});

describe('channel targets', () => {
  it('reads every url and *_url key, nested ones included, and resolves every url_env', () => {
    expect(
      channelTargets(
        {
          type: 'feishu',
          url_env: 'DISCORD_URL',
          api_url: 'https://api.example.com',
          app: { base_url: 'https://open.example.com', app_id_env: 'X' },
          chat_id: 'https://not-a-key.example.com',
        },
        secret,
      ),
    ).toEqual([
      { key: 'url_env', env: 'DISCORD_URL', url: 'file:///etc/passwd' },
      { key: 'api_url', url: 'https://api.example.com' },
      { key: 'app.base_url', url: 'https://open.example.com' },
    ]);
  });

  it('leaves an unset variable unjudged, for the attempt to report as a config problem', () => {
    expect(channelTargets({ type: 'discord', url_env: 'UNSET' }, secret)).toEqual([
      { key: 'url_env', env: 'UNSET', url: undefined },
    ]);
    expect(blockedTarget({ type: 'discord', url_env: 'UNSET' }, secret, policy)).toBeUndefined();
  });

  it('names the first URL the guard refuses without a lookup', () => {
    expect(blockedTarget({ type: 'discord', url_env: 'DISCORD_URL' }, secret, policy)).toMatchObject({
      target: { key: 'url_env', env: 'DISCORD_URL' },
      blocked: { reason: 'scheme' },
    });
    expect(blockedTarget({ type: 'slack', url_env: 'SLACK_URL' }, secret, policy)).toBeUndefined();
  });

  it('judges a URL again under another policy, and follows a variable whose value changed', () => {
    const entry = { type: 'ntfy', url: 'http://127.0.0.1:8080' };
    expect(blockedTarget(entry, secret, policy)).toMatchObject({ blocked: { reason: 'https_required' } });
    expect(blockedTarget(entry, secret, policy)).toMatchObject({ blocked: { reason: 'https_required' } });
    const lan = compileEgressPolicy(['127.0.0.1'], { resolve: async () => [] });
    expect(blockedTarget(entry, secret, lan)).toBeUndefined();
    const vars: Record<string, string> = { HOOK: 'https://hooks.slack.com/services/T/B/x' };
    const changing = { type: 'slack', url_env: 'HOOK' };
    expect(blockedTarget(changing, (k) => vars[k], policy)).toBeUndefined();
    vars['HOOK'] = 'file:///etc/passwd';
    expect(blockedTarget(changing, (k) => vars[k], policy)).toMatchObject({ blocked: { reason: 'scheme' } });
  });

  it('gives doctor a failure for a refused URL, DNS included, and never prints a path or query', async () => {
    const findings = await judgeChannelUrls(
      {
        bad: { type: 'discord', url_env: 'DISCORD_URL' },
        good: { type: 'slack', url_env: 'SLACK_URL' },
        inside: { type: 'ntfy', url: 'https://inside.example.com/topic?auth=tok' },
        unset: { type: 'discord', url_env: 'NOPE' },
      },
      secret,
      policy,
    );
    expect(findings.map((f) => [f.channel, f.level])).toEqual([
      ['bad', 'fail'],
      ['good', 'ok'],
      ['inside', 'fail'],
      ['unset', 'warn'],
    ]);
    expect(findings[2]?.message).toContain('private_address');
    const text = findings.map((f) => f.message).join('\n');
    expect(text).not.toMatch(/passwd|services\/T|auth=tok/);
  });
});
