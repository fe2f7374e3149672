import { afterEach, describe, expect, it } from 'vitest';
import { auth } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { type ConsoleHarness, consoleHarness, page, post } from './testing.js';

const DIALECTS = await dialects();

/** A Claude Code hook of a person's own session (no task): it shows on the sessions page. */
function prompt(session: string) {
  return JSON.stringify({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd: '/tmp',
    hook_event_name: 'UserPromptSubmit',
    prompt: 'tidy the README',
  });
}

describe.each(DIALECTS)('the console away switch on %s', (dialect) => {
  let h: ConsoleHarness;
  afterEach(() => h?.cleanup());

  it('switches away mode from the sessions page as the person, and each session shows it', async () => {
    h = await consoleHarness(dialect);
    const hook = await h.t.app.request('/v1/runtimes/claude-code/hooks', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: prompt('sess-away-1'),
    });
    expect(hook.status).toBe(200);
    const before = await (await page(h.t.app, '/console/sessions', h.approver)).text();
    expect(before).toContain('everyone (the tenant’s switch)');
    expect(before).toContain('Turn on');
    expect(before).toMatch(/sess-away-1[\s\S]*at desk/);
    const res = await post(h.t.app, '/console/away', h.approver, { away: 'on' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ owner: '', away: true, effective: true });
    const [event] = await h.t.services.log.list({ type: 'agent.away.changed', limit: 1 });
    expect(event?.envelope.actor.user_id).toBe('me');
    const api = await h.t.app.request('/v1/away', { headers: auth('admin') });
    expect(await api.json()).toMatchObject({ away: true, changed_by: 'me' });
    const after = await (await page(h.t.app, '/console/sessions', h.admin)).text();
    expect(after).toContain('Turn off');
    expect(after).toMatch(/sess-away-1[\s\S]*>away</);
    // An owner's own switch gets its own row.
    await post(h.t.app, '/console/away', h.admin, { away: 'on', owner: 'alice' });
    expect(await (await page(h.t.app, '/console/sessions', h.admin)).text()).toContain('>alice<');
  });

  it('refuses a bad form, a missing token and agent keys, and changes nothing then', async () => {
    h = await consoleHarness(dialect);
    const count = await h.eventCount();
    for (const fields of [
      {},
      { away: 'yes' },
      { away: 'on', owner: 'x'.repeat(201) },
      { away: 'on', who: 'x' },
    ] as Record<string, string>[])
      expect((await post(h.t.app, '/console/away', h.admin, fields)).status).toBe(400);
    expect((await post(h.t.app, '/console/away', h.admin, { away: 'on' }, { csrf: null })).status).toBe(403);
    const agent = await h.t.app.request('/console/away', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'away=on',
    });
    expect(agent.status).toBe(403);
    expect(await h.eventCount()).toBe(count);
  });
});
