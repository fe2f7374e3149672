import { afterEach, describe, expect, it } from 'vitest';
import { coreModule } from '../server/core-routes.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { signalsModule } from './module.js';
import { awayPort } from './port.js';

describe.each(await dialects())('the away port on %s (the console’s switch)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('switches as PUT /v1/away does: the row and its agent.away.changed event together', async () => {
    t = await testApp({ dialect, modules: [coreModule(), signalsModule()] });
    const away = t.port(awayPort);
    expect(await away.read()).toMatchObject({ owner: '', away: false, reason: 'never_set' });
    const view = await away.set({ owner: 'alice', away: true, by: 'ops' });
    expect(view).toMatchObject({ owner: 'alice', away: true, effective: true, changed_by: 'ops' });
    const res = await t.app.request('/v1/away?owner=alice', { headers: auth('approver') });
    expect(await res.json()).toMatchObject({ owner: 'alice', away: true, changed_by: 'ops' });
    const [event] = await t.services.log.list({ type: 'agent.away.changed', limit: 5 });
    expect(event?.envelope.actor.user_id).toBe('ops');
    expect(event?.envelope.redacted_summary).toEqual({ owner: 'alice', away: true, effective: true });
    // The tenant's own switch is untouched; alice's follows hers.
    expect((await away.read()).away).toBe(false);
    await away.set({ away: true, by: 'ops' });
    expect(await away.read()).toMatchObject({ owner: '', away: true, reason: 'switched_on' });
  });
});
