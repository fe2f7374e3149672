import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { deliveryPort } from '../port.js';
import { type Harness, harness, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../testing.js';

/** The console's reads of the delivery port: newest first, by id, and each endpoint's breaker. */
describe.each(await dialects())('delivery reads for the console on %s', (dialect) => {
  let h: Harness;
  let rx: ScriptedReceiver;
  afterEach(async () => {
    await h?.cleanup();
    await rx?.close();
  });

  it('lists newest first and by id, with the correlation the attempts are in, and the endpoints', async () => {
    rx = await startScriptedReceiver({ secret: SECRET });
    rx.script = () => ({ kind: 'answer', status: 204 });
    h = await harness({
      dialect,
      channels: { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } },
    });
    const port = h.port(deliveryPort);
    const first = await h.enqueue('hook');
    await new Promise((r) => setTimeout(r, 2));
    const second = await h.enqueue('hook');
    expect((await port.list!({ newestFirst: true, limit: 10 })).map((d) => d.id)).toEqual([
      second.id,
      first.id,
    ]);
    expect((await port.list!({ limit: 10 })).map((d) => d.id)).toEqual([first.id, second.id]);
    const [one] = await port.list!({ ids: [first.id], limit: 1 });
    expect(one).toMatchObject({ id: first.id, correlation_id: first.eventId });
    expect(await port.endpoints!()).toEqual([]);
    await h.drain();
    const [endpoint] = await port.endpoints!();
    expect(endpoint).toMatchObject({
      destination: 'hook',
      breaker: 'closed',
      disabled: false,
      open_until: null,
    });
  });
});
