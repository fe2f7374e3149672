import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, planDigest } from '../envelope/index.js';
import { EventLog } from '../log/log.js';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { deliveryPlanDigest, effectKey, type EffectsPort } from './port.js';
import { createEffects } from './service.js';

/**
 * The delivery engine settles a pass's attempts together (issue 13): `receiptedMany` must leave every
 * row and every `agent.effect.receipted` exactly as one `receipted` call per key would.
 */
describe.each(await dialects())('receipts of a batch on %s', (dialect) => {
  let store: TestStore;
  let log: EventLog;
  let effects: EffectsPort;
  beforeAll(async () => {
    store = await freshStore(dialect);
    log = new EventLog(store.db, { tenant_id: 't', environment: 'test' });
    effects = createEffects({ db: store.db, log, emit: (e, db) => log.append(e, db), now: Date.now });
  });
  afterAll(async () => {
    await store.cleanup();
  });

  async function prepare(n: number): Promise<string[]> {
    const keys: string[] = [];
    await store.db.tx(async (tx) => {
      for (let i = 0; i < n; i++) {
        const eventId = newId('event');
        const digest = deliveryPlanDigest(eventId, 'hook');
        await effects.prepared(
          {
            kind: 'delivery',
            ref: newId('delivery'),
            target: 'hook',
            plan_digest: digest,
            capability_id: null,
            correlation_id: eventId,
            causation_id: eventId,
          },
          tx,
        );
        keys.push(effectKey(digest, null));
      }
    });
    return keys;
  }

  it('records each receipt of a batch as receipted would, in one transaction, and skips unknown keys', async () => {
    const [ok, dead, unknown, viaOne] = await prepare(4);
    const found = await store.db.tx((tx) =>
      effects.receiptedMany!(
        [
          {
            key: ok!,
            receipt: { status: 'done', provider_id: 'm-1', answer: '{"id":1}', detail: 'HTTP 200' },
          },
          { key: dead!, receipt: { status: 'failed', answer: null, detail: 'HTTP 410' } },
          { key: unknown!, receipt: { status: 'unknown', detail: 'no answer' } },
          { key: 'idk_nothing_has_this_key', receipt: { status: 'done' } },
        ],
        tx,
      ),
    );
    expect(found).toBe(3);
    await effects.receipted(viaOne!, {
      status: 'done',
      provider_id: 'm-2',
      answer: '{"id":2}',
      detail: 'HTTP 200',
    });

    const a = await effects.get(ok!);
    const b = await effects.get(viaOne!);
    expect(a).toMatchObject({ status: 'done', provider_id: 'm-1', detail: 'HTTP 200' });
    expect(a!.answer_digest).toMatch(/^sha256:/);
    // The batch and the single call write the same fields.
    const shape = (v: typeof a) => ({
      status: v!.status,
      detail: v!.detail,
      has_answer: v!.answer_digest !== null,
      has_event: v!.receipted_event_id !== null,
    });
    expect(shape(a)).toEqual(shape(b));
    expect(await effects.get(dead!)).toMatchObject({
      status: 'failed',
      detail: 'HTTP 410',
      answer_digest: null,
    });
    expect(await effects.get(unknown!)).toMatchObject({ status: 'unknown', detail: 'no answer' });

    const receipted = (await log.list({ type: 'agent.effect.receipted' })).map((e) => e.envelope);
    expect(receipted).toHaveLength(4);
    const first = receipted.find((e) => e.redacted_summary.idempotency_key === ok);
    expect(first?.redacted_summary).toMatchObject({ status: 'done', provider_id: 'm-1', kind: 'delivery' });
    expect(first?.event_id).toBe(a!.receipted_event_id);
  });

  it('settles more receipts than one statement carries', async () => {
    const keys = await prepare(450);
    const found = await effects.receiptedMany!(
      keys.map((key) => ({ key, receipt: { status: 'done' as const, detail: 'HTTP 204' } })),
    );
    expect(found).toBe(450);
    const done = await effects.list({ status: 'done', limit: 500 });
    expect(done.filter((e) => keys.includes(e.idempotency_key))).toHaveLength(450);
  });
});

describe('the plan digest of a delivery', () => {
  it('is the plan digest of the same plan, written out', () => {
    for (const [eventId, destination] of [
      [newId('event'), 'hook'],
      ['evt_x', 'a2a-push:cfg_1'],
      ['evt_"quoted"\\', 'chan\u00e9\u{1F600}\n\u2028'],
    ] as const) {
      expect(deliveryPlanDigest(eventId, destination)).toBe(
        planDigest({ tool: 'delivery', resource: destination, input: { event_id: eventId } }),
      );
    }
    expect(() => deliveryPlanDigest('evt_\ud800lone', 'dest')).toThrow(/lone UTF-16 surrogate/);
  });
});
