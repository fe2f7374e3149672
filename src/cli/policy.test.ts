import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lint, test as policyTest } from './policy.js';

describe('switchboard policy lint and test', () => {
  let dir: string;
  let out: string[];
  let err: string[];
  const io = () => ({ cwd: dir, env: {}, out: (l: string) => out.push(l), err: (l: string) => err.push(l) });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-policy-cli-'));
    out = [];
    err = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prints every problem as file:line:col path: message and exits 1', () => {
    writeFileSync(
      join(dir, 'switchboard.yaml'),
      'policy_files: [./policy/*.yaml]\nrules:\n  - { id: a, whne: "true", decision: deny, reason_code: A }\n',
    );
    const policy = join(dir, 'policy');
    mkdirSync(policy);
    writeFileSync(
      join(policy, 'x.yaml'),
      'rules:\n  - id: b\n    when: "tol == 1"\n    decision: deny\n    reason_code: B\n',
    );
    expect(lint({ ...io(), config: 'switchboard.yaml' })).toBe(1);
    expect(err[0]).toMatch(/^switchboard\.yaml:3:\d+ rules\.0: Unrecognized key: "whne"$/);
    expect(err.at(-1)).toBe('1 problem');
  });

  it('reports the revision and rule count of a good policy and exits 0', () => {
    writeFileSync(join(dir, 'switchboard.yaml'), 'rules:\n  - { id: a, decision: deny, reason_code: A }\n');
    expect(lint(io())).toBe(0);
    expect(out[0]).toMatch(/^ok: 1 rules from .*switchboard\.yaml, revision rev_[0-9a-f]{16}$/);
  });

  it('explains the decision and each matched rule for an intent file, and checks --expect', () => {
    writeFileSync(
      join(dir, 'switchboard.yaml'),
      [
        'rules:',
        '  - { id: loop, when: "task.steps > 3", decision: deny, reason_code: LOOP }',
        '  - { id: bash, match: { tools: [Bash] }, decision: require_approval, reason_code: SHELL }',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'i.json'),
      JSON.stringify({ tool: 'Bash', input: { command: 'ls' }, task: { steps: 4 } }),
    );
    expect(policyTest('i.json', { ...io(), expect: 'deny' })).toBe(0);
    expect(out[0]).toBe('decision: deny (LOOP)');
    expect(out.join('\n')).toContain('matched loop: deny LOOP priority 0, when task.steps > 3');
    expect(out.join('\n')).toContain('matched bash: require_approval SHELL');
    expect(policyTest('i.json', { ...io(), expect: 'allow' })).toBe(1);
    expect(err).toEqual(['expected allow, got deny']);
    writeFileSync(join(dir, 'bad.json'), '{"tool": "Bash"}');
    expect(() => policyTest('bad.json', io())).toThrow(/"input" must be a JSON object/);
  });
});
