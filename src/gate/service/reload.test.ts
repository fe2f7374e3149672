import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import type { GateDecision } from '../../gate/port.js';
import { type GateHarness, gateHarness } from './testing.js';

const GOOD = `rules:
  - { id: no-rm, match: { tools: [Bash] }, when: 'input.command.startsWith("rm")', decision: deny, reason_code: NO_RM }
`;
const OTHER = `rules:
  - { id: no-rm, match: { tools: [Bash] }, when: 'input.command.startsWith("rm")', decision: defer, reason_code: LATER }
`;
const BROKEN = `rules:
  - { id: no-rm, match: { tools: [Bash] }, when: 'input.command.startsWith(', decision: deny, reason_code: NO_RM }
`;

describe.each(await dialects())('policy loading and reload on %s', (dialect) => {
  let h: GateHarness;
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-policy-'));
    file = join(dir, 'policy.yaml');
  });
  afterEach(async () => {
    await h?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (text: string, module = {}) => {
    writeFileSync(file, text);
    h = await gateHarness(dialect, { config: { policy_files: [file] }, module });
  };
  const decide = async (command: string, tool = 'Bash') => {
    const res = await h.post('/v1/gate/evaluate', { tool, input: { command } });
    expect(res.status).toBe(200);
    return (await res.json()) as GateDecision;
  };
  const events = async (type: string) =>
    (
      await h.t.services.db.query<{ body: string }>({
        text: 'SELECT body FROM events WHERE type = $1 ORDER BY seq',
        values: [type],
      })
    ).map((r) => (JSON.parse(r.body) as { redacted_summary: Record<string, unknown> }).redacted_summary);

  it('fails closed at start with a broken policy: not ready, high risk denied, read-only tagged', async () => {
    await start(BROKEN);
    const ready = await h.t.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain(`gate: no policy loaded: ${file}:2:`);
    expect(await decide('ls')).toMatchObject({
      decision: 'deny',
      reason_code: 'POLICY_UNAVAILABLE',
      policy_revision: 'none',
    });
    expect(await decide('x', 'Read')).toMatchObject({ decision: 'allow', tags: ['policy_unavailable'] });
    const [rejected] = await events('agent.policy.rejected');
    expect(rejected).toMatchObject({ trigger: 'start', kept_revision: 'none', problem_count: 1 });
    writeFileSync(file, GOOD);
    expect(await h.gate.reload()).toMatchObject({ kind: 'loaded', previous: null });
    expect((await h.t.app.request('/readyz')).status).toBe(200);
    expect(await decide('rm -rf /')).toMatchObject({ decision: 'deny', reason_code: 'NO_RM' });
  });

  it('keeps the serving revision when a reload is broken, and reports it on GET /v1/policy', async () => {
    await start(GOOD);
    const first = (await decide('rm x')).policy_revision;
    writeFileSync(file, BROKEN);
    const outcome = await h.gate.reload();
    expect(outcome).toMatchObject({ kind: 'rejected', kept: first });
    expect(await decide('rm x')).toMatchObject({ decision: 'deny', policy_revision: first });
    expect((await h.t.app.request('/readyz')).status).toBe(200);
    const status = (await (await h.get('/v1/policy')).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ revision: first });
    expect(status.loaded_at).toBe(new Date(h.clock.now).toISOString());
    expect(String(status.last_error)).toMatch(new RegExp(`^${file}:2:\\d+ rule no-rm: when: `));
    expect((await h.get('/v1/policy', 'agent')).status).toBe(403);

    writeFileSync(file, OTHER);
    expect(await h.gate.reload()).toMatchObject({ kind: 'loaded', previous: first });
    const second = await decide('rm x');
    expect(second).toMatchObject({ decision: 'defer', reason_code: 'LATER' });
    expect(second.policy_revision).not.toBe(first);
    expect(((await (await h.get('/v1/policy')).json()) as { last_error: unknown }).last_error).toBeNull();
    expect(await h.gate.reload()).toMatchObject({ kind: 'unchanged' });
    expect((await events('agent.policy.loaded')).map((e) => e.revision)).toEqual([
      first,
      second.policy_revision,
    ]);
    expect(await events('agent.policy.rejected')).toHaveLength(1);
  });

  it('reloads by itself when a watched policy file changes', async () => {
    await start(GOOD, { watch: true, watchDebounceMs: 20 });
    expect((await decide('rm x')).decision).toBe('deny');
    writeFileSync(file, OTHER);
    let d = await decide('rm x');
    for (let i = 0; i < 100 && d.decision !== 'defer'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      d = await decide('rm x');
    }
    expect(d.decision).toBe('defer');
  });

  it('watches the named policy file of a policy that never loaded, and becomes ready once it is fixed', async () => {
    await start(BROKEN, { watch: true, watchDebounceMs: 20 });
    expect((await h.t.app.request('/readyz')).status).toBe(503);
    writeFileSync(file, GOOD);
    let status = 503;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await h.t.app.request('/readyz')).status;
    }
    expect(status).toBe(200);
    expect((await decide('rm x')).reason_code).toBe('NO_RM');
  });

  it('merges config rules before policy-file rules, so equal priorities go to the config rule', async () => {
    writeFileSync(
      file,
      GOOD.replace('decision: deny, reason_code: NO_RM', 'decision: deny, reason_code: FROM_FILE'),
    );
    h = await gateHarness(dialect, {
      config: {
        policy_files: [file],
        rules: [
          { id: 'cfg', match: { tools: ['Bash'] }, decision: 'deny', reason_code: 'FROM_CONFIG' },
          {
            id: 'hi',
            match: { tools: ['Bash'] },
            when: 'input.command == "rm hi"',
            decision: 'deny',
            reason_code: 'HIGH',
            priority: 5,
          },
          { id: 'ok', match: { tools: ['Bash'] }, decision: 'allow', reason_code: 'OK', priority: 100 },
        ],
      },
    });
    expect(await decide('rm x')).toMatchObject({ reason_code: 'FROM_CONFIG' });
    const hi = await decide('rm hi');
    expect(hi.reason_code).toBe('HIGH');
    expect(hi.matched_rules.map((m) => m.id)).toEqual(['ok', 'hi', 'cfg', 'no-rm']);
  });
});
