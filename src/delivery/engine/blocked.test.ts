import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BLOCKED_URLS } from '../../egress/testing.js';
import { dialects } from '../../store/testing.js';
import { deliveryModule } from '../module.js';
import { type Harness, harness, message, startScriptedReceiver } from '../testing.js';

const DIALECTS = await dialects();

describe.each(DIALECTS)('blocked channel URLs on %s', (dialect) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  async function corpusHarness(urls: readonly string[]) {
    const channels: Record<string, Record<string, unknown>> = {};
    const env: Record<string, string> = {};
    urls.forEach((url, i) => {
      channels[`c${i}`] = { type: 'discord', url_env: `URL_${i}` };
      env[`URL_${i}`] = url;
    });
    return harness({ dialect, channels, module: { env } });
  }

  it('records 100 % of a corpus of blocked URLs as blocked at enqueue, on both lanes, with no attempt', async () => {
    h = await corpusHarness(BLOCKED_URLS.map(([u]) => u));
    const svc = h.delivery.service()!;
    for (const [i] of BLOCKED_URLS.entries()) {
      await h.services.db.tx(async (tx) => {
        const cause = await h!.services.emit({ type: 'agent.progress.reported' }, tx);
        await svc.enqueue(tx, {
          eventId: cause.event_id,
          destination: `c${i}`,
          message: message(cause.event_id),
          // Every other one on the priority lane, which retries `retry` outcomes forever.
          priority: i % 2 ? 'high' : 'normal',
        });
      });
    }
    // Before any engine pass: nothing is pending, every row is dead with the guard's reason.
    const rows = await h.rows();
    expect(rows).toHaveLength(BLOCKED_URLS.length);
    const recorded = rows.filter((r) => r.status === 'dead' && r.attempts === 0);
    const byDest = new Map(rows.map((r) => [r.destination, r]));
    for (const [i, [url, reason]] of BLOCKED_URLS.entries()) {
      expect(byDest.get(`c${i}`), url).toMatchObject({ status: 'dead', last_error: `blocked: ${reason}` });
    }
    expect(recorded.length / BLOCKED_URLS.length).toBe(1);
    const events = await h.events('integration.delivery');
    expect(events).toHaveLength(BLOCKED_URLS.length);
    expect(events.every((e) => e.type === 'integration.delivery.blocked')).toBe(true);
    for (const e of events) {
      expect(e.summary['outcome']).toBe('dead');
      // The event names the key and the variable, never the URL's path or query.
      expect(String(e.summary['summary'])).toMatch(/channels\.c\d+\.url_env \(\$URL_\d+\)/);
      expect(String(e.summary['summary'])).not.toMatch(/passwd|meta-data|secret|alert/);
    }
    await h.drain();
    expect((await h.rows()).every((r) => r.status === 'dead' && r.attempts === 0)).toBe(true);
  });

  it('refuses at the attempt, as blocked and not retried, a URL that went bad after it was enqueued', async () => {
    const env: Record<string, string> = { HOOK_URL: 'https://hooks.example.com/x' };
    h = await harness({
      dialect,
      channels: { d: { type: 'discord', url_env: 'HOOK_URL' } },
      module: { env },
    });
    await h.services.db.tx(async (tx) => {
      const cause = await h!.services.emit({ type: 'agent.progress.reported' }, tx);
      await h!.delivery.service()!.enqueue(tx, {
        eventId: cause.event_id,
        destination: 'd',
        message: message(cause.event_id),
        priority: 'high',
      });
    });
    expect((await h.rows())[0]).toMatchObject({ status: 'pending' });
    env['HOOK_URL'] = 'gopher://127.0.0.1:70/x';
    await h.drain();
    expect((await h.rows())[0]).toMatchObject({ status: 'dead', last_error: 'blocked: scheme', attempts: 1 });
    const [event] = await h.events('integration.delivery');
    expect(event).toMatchObject({ type: 'integration.delivery.blocked' });
    expect(event?.summary['blocked_reason']).toBe('scheme');
  });

  it('never sends a URL with user info, even to an allowed host', async () => {
    const rx = await startScriptedReceiver();
    try {
      const url = rx.url.replace('http://', 'http://user:pw@');
      h = await harness({
        dialect,
        channels: { d: { type: 'discord', url_env: 'U' } },
        module: { env: { U: url } },
      });
      await h.enqueue('d');
      await h.drain();
      expect((await h.rows())[0]).toMatchObject({ status: 'dead', last_error: 'blocked: userinfo' });
      expect(rx.hits).toHaveLength(0);
    } finally {
      await rx.close();
    }
  });

  it('still delivers to an allowed URL from url_env', async () => {
    const rx = await startScriptedReceiver();
    try {
      h = await harness({
        dialect,
        channels: { d: { type: 'discord', url_env: 'U' } },
        module: { env: { U: `${rx.url}/api/webhooks/1/tok` } },
      });
      await h.enqueue('d');
      expect((await h.rows())[0]).toMatchObject({ status: 'pending' });
      await h.drain();
      expect(rx.hits).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });

  it('warns at start-up about each channel whose URL the guard refuses, naming the key and variable', async () => {
    h = await corpusHarness(['file:///etc/passwd', 'https://hooks.example.com/ok']);
    const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const mod = deliveryModule({
      workers: false,
      env: { URL_0: 'file:///etc/passwd', URL_1: 'https://a.example/' },
    });
    await mod.start?.({ ...h.services, config: h.config, logger, provide: () => {} } as never);
    await mod.stop?.();
    const lines = warnings.map(
      (w) => w as unknown as { channel: string; key: string; env: string; msg: string },
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ channel: 'c0', key: 'url_env', env: 'URL_0', reason: 'scheme' });
    expect(lines[0]?.msg).toContain('channels.c0');
    expect(lines[0]?.msg).not.toContain('passwd');
  });
});

describe('channel URLs in the config file', () => {
  it.each([
    ['https://user:pw@hooks.example.com/x', 'user info'],
    ['file:///etc/passwd', 'http:// or https://'],
    ['ws://hooks.example.com/', 'http:// or https://'],
    ['javascript:alert(1)', 'http:// or https://'],
  ])('refuses %s at config load', async (url, says) => {
    const { channelsConfigSchema } = await import('../../channels/config.js');
    const r = channelsConfigSchema.safeParse({ hook: { type: 'webhook', url, secret_env: 'S' } });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(says);
  });
});
