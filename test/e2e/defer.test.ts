import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../src/cli/testing.js';
import type { GateDecision } from '../../src/gate/port.js';
import { auth, type TestApp, testApp } from '../../src/server/testing.js';
import { dialects } from '../../src/store/testing.js';

/**
 * Issue 17, point 6: a `defer` carries `retry_after`; the runtime's reply says when to try again; a
 * retry before then keeps the defer, a retry after it is decided afresh. The rule defers only until
 * 10:01, so a retry at 10:02 that were decided afresh would be allowed: it is not, until 10:05.
 */
const RULES = [
  {
    id: 'change-window',
    match: { kinds: ['shell'] },
    when: 'args.command.startsWith("deploy") && now < timestamp("2026-06-01T10:01:00Z")',
    decision: 'defer',
    reason_code: 'CHANGE_WINDOW',
    retry_after_seconds: 300,
  },
];
const START = Date.parse('2026-06-01T10:00:00Z');
const RETRY_AFTER = '2026-06-01T10:05:00.000Z';

describe.each(await dialects())('defer with retry_after on %s', (dialect) => {
  let t: TestApp;
  const clock = { now: START };
  beforeAll(async () => {
    t = await testApp({ dialect, config: { rules: RULES }, now: () => clock.now });
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  const evaluate = async (command: string, session = 'ops-1') => {
    const res = await t.app.request('/v1/gate/evaluate', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'Bash', input: { command }, runtime: 'claude-code', session_id: session }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as GateDecision;
  };
  const hook = async (runtime: 'claude-code' | 'codex', command: string) => {
    const raw = JSON.parse(
      readFileSync(join(ROOT, `src/runtimes/${runtime}/fixtures/kinds/shell.json`), 'utf8'),
    );
    raw.session_id = `hook-${runtime}`;
    raw.tool_input.command = command;
    const res = await t.app.request(`/v1/runtimes/${runtime}/hooks`, {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify(raw),
    });
    expect(res.status).toBe(200);
    return JSON.stringify(await res.json());
  };

  it('holds the defer until retry_after, then decides afresh', async () => {
    clock.now = START;
    const first = await evaluate('deploy api');
    expect(first).toMatchObject({
      decision: 'defer',
      reason_code: 'CHANGE_WINDOW',
      retry_after: RETRY_AFTER,
    });
    clock.now = START + 2 * 60_000;
    const early = await evaluate('deploy api');
    expect(early).toMatchObject({
      decision: 'defer',
      reason_code: 'CHANGE_WINDOW',
      retry_after: RETRY_AFTER,
    });
    // Another plan, or the same plan in another session, is decided on its own.
    expect((await evaluate('deploy web')).decision).toBe('allow');
    expect((await evaluate('deploy api', 'ops-2')).decision).toBe('allow');
    const deferred = await t.services.log.list({ type: 'agent.tool.deferred', limit: 10 });
    expect(deferred.map((e) => e.envelope.redacted_summary)).toEqual([
      expect.objectContaining({ decision: 'defer', retry_after: RETRY_AFTER }),
      expect.objectContaining({ decision: 'defer', retry_after: RETRY_AFTER, held: true }),
    ]);
    clock.now = Date.parse(RETRY_AFTER) + 1;
    const later = await evaluate('deploy api');
    expect(later.decision).toBe('allow');
    expect(later.retry_after).toBeUndefined();
  });

  it('tells the runtime when to try again', async () => {
    clock.now = START;
    // Claude Code parks the call natively; Codex has no defer, so it is refused with the same words.
    expect(await hook('claude-code', 'deploy db')).toContain(`Retry this call after ${RETRY_AFTER}`);
    expect(await hook('codex', 'deploy db')).toContain(`Retry this call after ${RETRY_AFTER}`);
  });
});
