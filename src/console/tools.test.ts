import { afterEach, describe, expect, it } from 'vitest';
import { auth } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { type ConsoleHarness, consoleHarness, page, TOOLS, XSS_CORPUS } from './testing.js';

const DIALECTS = await dialects();
describe.each(DIALECTS)('the console tools page on %s', (dialect) => {
  let h: ConsoleHarness;
  afterEach(() => h?.cleanup());

  it('lists the reach registry and every caller’s recent touches, newest first, for admins only', async () => {
    h = await consoleHarness(dialect, { config: { tools: TOOLS } });
    const touch = (tool: string, id: string) =>
      h.t.app.request('/v1/touch', {
        method: 'POST',
        headers: { ...auth('agent'), 'content-type': 'application/json' },
        body: JSON.stringify({ tool_name: tool, params: { n: 1 }, request_id: id }),
      });
    expect((await touch('ops.uptime', 'req-up-1')).status).toBe(200);
    await touch('ops.missing', 'req-missing-1');
    const before = await h.eventCount();
    const res = await page(h.t.app, '/console/tools', h.admin);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('ops.uptime');
    expect(text).toContain('How long the box has been up');
    // Agent-written or configured text is escaped, never markup.
    expect(text).not.toContain(XSS_CORPUS[0]);
    expect(text).toContain('&#60;img src=x onerror=');
    expect(text.indexOf('req-missing-1')).toBeLessThan(text.indexOf('req-up-1'));
    expect(text).toContain('TOOL_FAILED');
    expect(text).toContain('memory_read');
    const one = await (await page(h.t.app, '/console/tools?tool=ops.uptime', h.admin)).text();
    const recent = one.slice(one.indexOf('id="touch-h"'));
    expect(recent).toContain('req-up-1');
    expect(recent).not.toContain('req-missing-1');
    expect((await page(h.t.app, '/console/tools?tool=no.such', h.admin)).status).toBe(404);
    expect((await page(h.t.app, '/console/tools?tool=%3Cx%3E', h.admin)).status).toBe(400);
    expect((await page(h.t.app, '/console/tools', h.approver)).status).toBe(403);
    expect(await h.eventCount()).toBe(before);
  });
});
