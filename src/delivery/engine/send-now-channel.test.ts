import { afterEach, describe, expect, it, vi } from 'vitest';
import { dialects } from '../../store/testing.js';
import {
  eventually,
  type Harness,
  harness,
  message,
  SECRET,
  type ScriptedReceiver,
  startScriptedReceiver,
} from '../testing.js';

/**
 * `enqueueNow` to a configured channel (what notify's reports use): the row is admitted and leased in
 * the enqueuing transaction and sent right after its commit, signed as a claimed row is, with no claim
 * transaction in between; a channel with a revocation mark waits for the claim, which settles it.
 */
describe.each(await dialects())('a configured channel sent at enqueue on %s', (dialect) => {
  // PostgreSQL keeps the claim for configured channels (engine.ts, `admitNow`).
  const sentAtEnqueue = dialect === 'sqlite';
  let h: Harness | undefined;
  let rx: ScriptedReceiver | undefined;
  afterEach(async () => {
    await h?.cleanup();
    await rx?.close();
    h = undefined;
  });

  async function setup() {
    rx = await startScriptedReceiver({ secret: SECRET });
    // A poll far away: only the send at enqueue can deliver within the test.
    h = await harness({
      dialect,
      channels: { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } },
      module: { workers: true, engine: { pollMs: 600_000 } },
    });
    const engine = h.delivery.engine()!;
    const sendLeased = vi.spyOn(engine, 'sendLeased');
    const enqueueNow = () =>
      h!.services.db.tx(async (tx) => {
        const cause = await h!.services.emit({ type: 'agent.progress.reported' }, tx);
        const r = await h!.delivery.service()!.enqueueNow(tx, {
          eventId: cause.event_id,
          destination: 'hook',
          message: message(cause.event_id),
        });
        return { eventId: cause.event_id, id: r.id };
      });
    return { h, rx, sendLeased, enqueueNow };
  }

  it('sends the row right after the commit (SQLite; the claim on PostgreSQL), signed, and records it as a claimed row is recorded', async () => {
    const { h, rx, sendLeased, enqueueNow } = await setup();
    const { eventId, id } = await enqueueNow();
    // PostgreSQL: the enqueue's after-commit wake has a lane claim it.
    await eventually(async () => (await h.rows())[0]?.status === 'succeeded');
    expect(sendLeased).toHaveBeenCalledTimes(sentAtEnqueue ? 1 : 0);
    if (sentAtEnqueue) expect(sendLeased.mock.calls[0]![0]).toMatchObject({ id, status: 'claimed' });
    expect(rx.badSignatures).toBe(0);
    expect(rx.byId.get(eventId)).toBe(1);
    expect(Number((await h.rows())[0]!.attempts)).toBe(1);
    // The endpoint's bucket and breaker saw the send, as a claim's admission records it.
    expect(await h.endpoint('hook')).toBeDefined();
    expect((await h.events('integration.delivery')).map((e) => e.type)).toEqual([
      'integration.delivery.succeeded',
    ]);
  });

  it('leaves a channel with a revocation mark to the claim, which tries it again once the credential changed', async () => {
    const { h, rx, sendLeased, enqueueNow } = await setup();
    // A mark left by another credential (its fingerprint is not this one's).
    await h.services.db.query({
      text: `INSERT INTO channel_credentials (destination, status, channel_type, reason, fingerprint, since, event_id)
             VALUES ('hook', 'revoked', 'webhook', 'refused', 'not-this-credential', 1, 'evt_x')`,
    });
    const { eventId } = await enqueueNow();
    // The enqueue's after-commit wake has a lane claim it: the claim clears the mark and sends.
    await eventually(async () => (await h.rows())[0]?.status === 'succeeded');
    expect(sendLeased).not.toHaveBeenCalled();
    expect(rx.byId.get(eventId)).toBe(1);
    expect((await h.events('integration.credential')).map((e) => e.type)).toEqual([
      'integration.credential.restored',
    ]);
  });
});
