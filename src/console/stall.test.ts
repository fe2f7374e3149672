import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { auth } from '../server/testing.js';
import { signalsModule } from '../signals/module.js';
import { dialects } from '../store/testing.js';
import { type ConsoleHarness, consoleHarness, page } from './testing.js';

const T0 = 1_800_000_000_000;
const MIN = 60_000;

function hookBody(name: string, session: string): string {
  const raw = JSON.parse(
    readFileSync(new URL(`../runtimes/claude-code/fixtures/${name}.json`, import.meta.url), 'utf8'),
  ) as Record<string, unknown>;
  return JSON.stringify({ ...raw, session_id: session });
}

/** The row of one session on the sessions page. */
function rowOf(html: string, session: string): string {
  const at = html.indexOf(session);
  expect(at, `${session} is on the page`).toBeGreaterThan(-1);
  return html.slice(at, html.indexOf('</tr>', at));
}

describe.each(await dialects())('the console’s stall flag on %s', (dialect) => {
  let h: ConsoleHarness;
  afterEach(() => h?.cleanup());

  it('flags the sessions the supervisor found stalled, and not a quiet one whose turn ended', async () => {
    let clock = T0;
    const signals = signalsModule();
    h = await consoleHarness(dialect, { replace: [signals], now: () => clock });
    const hook = async (name: string, session: string) => {
      const res = await h.t.app.request('/v1/runtimes/claude-code/hooks', {
        method: 'POST',
        headers: { ...auth('agent'), 'content-type': 'application/json' },
        body: hookBody(name, session),
      });
      expect(res.status).toBe(200);
      await h.t.services.relay.drain();
    };
    // One session mid-turn with a tool that never completes; one whose turn ended (quiet, not stalled).
    await hook('UserPromptSubmit', 'sess-hung-01');
    await hook('PreToolUse', 'sess-hung-01');
    await hook('UserPromptSubmit', 'sess-done-01');
    await hook('Stop', 'sess-done-01');
    clock += 11 * MIN;
    expect(await signals.stallDue()).toBe(1);

    const html = await (await page(h.t.app, '/console/sessions', h.approver)).text();
    expect(html).toContain('stalled as the supervisor reported it');
    expect(rowOf(html, 'sess-hung-01')).toContain('>stalled<');
    // The page's own ten-quiet-minutes rule would have flagged this one too.
    expect(rowOf(html, 'sess-done-01')).not.toContain('>stalled<');

    // Activity clears the stall on the page as it does in the supervisor.
    await hook('PostToolUse', 'sess-hung-01');
    const later = await (await page(h.t.app, '/console/sessions', h.approver)).text();
    expect(rowOf(later, 'sess-hung-01')).not.toContain('>stalled<');
  });
});
