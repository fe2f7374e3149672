import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { type NtfyStandIn, ntfyStandIn } from '../channels/ntfy/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { notifyModule } from '../notify/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { coreModule } from '../server/core-routes.js';
import { hasLoneSurrogate } from '../text/index.js';
import { signalsModule } from './module.js';

/**
 * Issue #22, class 1, end to end: a Claude Code `Stop` whose last message has an emoji exactly where
 * the signals module cuts it (summary_max_chars) still reaches the phone. Cutting by UTF-16 units left
 * half of the emoji, the event could not be hashed, the relay subscriber failed, and the hook had
 * already answered 200: the "done" was lost without a trace on the phone.
 */

const stop = (session: string, message: string) =>
  JSON.stringify({
    ...JSON.parse(
      readFileSync(new URL('../runtimes/claude-code/fixtures/Stop.json', import.meta.url), 'utf8'),
    ),
    session_id: session,
    last_assistant_message: message,
  });

async function until<T>(fn: () => T | undefined, ms = 15_000): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const MAX = 60;

describe('a Stop message cut in the middle of an emoji', () => {
  let receiver: NtfyStandIn;
  let gw: TestGateway;

  beforeAll(async () => {
    receiver = await ntfyStandIn();
    gw = await testGateway({
      dialect: 'sqlite',
      config: {
        signals: { summary_max_chars: MAX },
        auth: { keys: [{ name: 'bot', role: 'agent', key: KEYS.agent }] },
        channels: { phone: { type: 'ntfy', url: receiver.url, topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        egress: { allow: ['127.0.0.1'] },
      },
      modules: [
        coreModule(),
        deliveryModule({ env: {} }),
        gateModule(),
        runtimesModule(),
        notifyModule(),
        signalsModule(),
      ],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await receiver?.close();
  });

  it('reaches the phone whole, whichever unit of the emoji falls on the cut', async () => {
    const sessions: string[] = [];
    // The cut keeps MAX - 1 units and an ellipsis: an emoji starting at MAX - 3 … MAX straddles it.
    for (let at = MAX - 4; at <= MAX + 1; at++) {
      const session = `emoji-${at}`;
      sessions.push(session);
      const message = `${'a'.repeat(at)}🚀 and then some more words after the cut`;
      const res = await fetch(`${gw.gateway.url}/v1/runtimes/claude-code/hooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
        body: stop(session, message),
      });
      expect(res.status).toBe(200);
    }
    for (const session of sessions) {
      const at = Number(session.split('-')[1]);
      const got = await until(() =>
        receiver.published.find((p) => p.message?.includes(`session: ${session}`)),
      );
      expect(got, `the Stop of ${session} reached the phone`).toBeDefined();
      expect(hasLoneSurrogate(got?.message ?? '')).toBe(false);
      expect(got?.message).toContain('a'.repeat(Math.min(at, MAX - 2)));
      if (at + 2 <= MAX - 1) expect(got?.message).toContain('🚀');
    }
    // The subscriber that used to fail on the half emoji: no relay error may name what RFC 8785 refused.
    const errors = await gw.gateway.services.db.query<{ last_error: string }>({
      text: 'SELECT last_error FROM outbox WHERE last_error IS NOT NULL',
    });
    expect(errors.map((e) => e.last_error).filter((e) => /surrogate|RFC 8785|canonical/i.test(e))).toEqual(
      [],
    );
  }, 60_000);
});
