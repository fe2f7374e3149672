import { afterEach, describe, expect, it } from 'vitest';
import { auth } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { reportBlock } from './pages/shadow.js';
import { type ConsoleHarness, consoleHarness, page, post, XSS_CORPUS } from './testing.js';

const DIALECTS = await dialects();
const SERVING = [
  { id: 'no-rm', when: 'input.command.contains("rm -rf")', decision: 'deny', reason_code: 'RM' },
];
/** The draft: rm stays denied, and `git push` now needs a person. */
const DRAFT = `rules:
  - id: no-rm
    when: input.command.contains("rm -rf")
    decision: deny
    reason_code: RM
  - id: push-needs-a-person
    when: input.command.contains("git push")
    decision: require_approval
    reason_code: PUSH
`;

describe.each(DIALECTS)('the console shadow run on %s', (dialect) => {
  let h: ConsoleHarness;
  afterEach(() => h?.cleanup());

  async function record(command: string) {
    const res = await h.t.app.request('/v1/gate/evaluate', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'Bash', input: { command } }),
    });
    expect(res.status).toBe(200);
  }

  it('runs a draft over the recorded intents and lists the decisions that would change, writing nothing', async () => {
    h = await consoleHarness(dialect, { config: { rules: SERVING } });
    for (const c of ['ls', 'git push origin main', 'rm -rf /tmp/x', `git push ${XSS_CORPUS[0]}`])
      await record(c);
    const before = await h.eventCount();
    const form = await page(h.t.app, '/console/policy/shadow', h.admin);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('name="policy_yaml"');
    const res = await post(
      h.t.app,
      '/console/policy/shadow',
      h.admin,
      { policy_yaml: DRAFT, since: '1d' },
      {
        headers: { accept: 'text/html', 'x-requested-with': '' },
      },
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('2 of 4 recorded intents would be decided differently');
    expect(text).toContain('allow→require_approval');
    expect(text).toContain('push-needs-a-person');
    expect(text).not.toContain(XSS_CORPUS[0]);
    // The draft stays in the form, to edit and run again.
    expect(text).toContain('push-needs-a-person\n    when');
    const json = await post(h.t.app, '/console/policy/shadow', h.admin, { policy_yaml: DRAFT });
    const report = (await json.json()) as { evaluated: number; counts: Record<string, number> };
    expect(report).toMatchObject({ evaluated: 4, counts: { 'allow→require_approval': 2 } });
    expect(await h.eventCount()).toBe(before);
  });

  it('shows a broken draft’s problems under the kept form, and refuses bad fields, approvers and a missing token', async () => {
    h = await consoleHarness(dialect, { config: { rules: SERVING } });
    const html = { headers: { accept: 'text/html', 'x-requested-with': '' } };
    const broken =
      'rules:\n  - id: bad\n    when: input.command.contains(\n    decision: deny\n    reason_code: X\n';
    const res = await post(h.t.app, '/console/policy/shadow', h.admin, { policy_yaml: broken }, html);
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain('The draft was not run');
    expect(text).toContain('reason_code: X');
    for (const [f, status] of [
      [{ policy_yaml: '' }, 400],
      [{ policy_yaml: DRAFT, since: 'yesterday' }, 400],
      [{ policy_yaml: DRAFT, limit: '0' }, 400],
      [{ policy_yaml: DRAFT, other: 'x' }, 400],
    ] as const) {
      const r = await post(h.t.app, '/console/policy/shadow', h.admin, f as Record<string, string>);
      expect({ f, status: r.status }).toEqual({ f, status });
    }
    expect((await post(h.t.app, '/console/policy/shadow', h.approver, { policy_yaml: DRAFT })).status).toBe(
      403,
    );
    const noToken = await post(
      h.t.app,
      '/console/policy/shadow',
      h.admin,
      { policy_yaml: DRAFT },
      { csrf: null },
    );
    expect(noToken.status).toBe(403);
  });
});

describe('the shadow report block', () => {
  it('says how many intents could not be re-decided, and says nothing when none were skipped', () => {
    const report = { evaluated: 9, skipped: 2, changed: [], counts: {} };
    expect(reportBlock(report)).toContain('2 more could not be re-decided');
    expect(reportBlock({ ...report, skipped: 0 })).not.toContain('could not be re-decided');
  });
});
