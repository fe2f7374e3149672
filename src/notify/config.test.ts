import { describe, expect, it } from 'vitest';
import { NOTIFY_RATE_PER_MINUTE, notifyConfigProblems, notifyConfigSchema, routesSchema } from './config.js';

describe('notify and routes config', () => {
  it('defaults to six a minute, started not sent, secrets blocked, no link domains', () => {
    expect(notifyConfigSchema.parse({})).toMatchObject({
      rate_per_minute: NOTIFY_RATE_PER_MINUTE,
      progress_merge_window_seconds: 30,
      send_started: false,
      secrets: 'block',
      allowed_link_domains: [],
      external_channels: [],
      aliases: {},
      locale: 'en',
    });
    expect(NOTIFY_RATE_PER_MINUTE).toBe(6);
  });

  it('gives a route the match "true" by default', () => {
    expect(routesSchema.parse([{ channels: ['phone'] }])).toEqual([
      { match: 'true', channels: ['phone'], fallback_after: 3 },
    ]);
  });

  it('reports every problem with its key path: unknown keys, bad CEL, unknown channels, bad enums', () => {
    const problems = notifyConfigProblems({
      channels: { phone: { type: 'ntfy' } },
      routes: [
        { match: 'stage == "failed"', channels: ['phone'], fallback: ['pager'] },
        { match: 'stage +', channels: ['phone'] },
        { match: 'stage', channels: ['phone'] },
      ],
      notify: { secrets: 'shred', recipients: ['x'] },
    });
    const paths = problems.map((p) => p.path);
    expect(paths).toContain('routes.0.fallback');
    expect(paths).toContain('routes.1.match');
    expect(paths).toContain('routes.2.match');
    expect(paths).toContain('notify.secrets');
    expect(problems.some((p) => p.path === 'notify' && /recipients/.test(p.message))).toBe(true);
  });

  it('refuses a route with a recipient in it: recipients live under channels only', () => {
    expect(routesSchema.safeParse([{ channels: ['phone'], to: 'me@example.com' }]).success).toBe(false);
  });

  it('finds nothing wrong with the CONTRACT.md example', () => {
    expect(
      notifyConfigProblems({
        channels: { phone: {} },
        routes: [{ match: 'true', channels: ['phone'] }],
        notify: {},
      }),
    ).toEqual([]);
  });
});
