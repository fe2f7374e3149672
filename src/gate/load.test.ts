import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePolicy } from './compile.js';
import { formatProblem, loadPolicy, type PolicyProblem } from './load.js';

function problemsOf(text: string, name = 'sb.yaml'): PolicyProblem[] {
  const loaded = loadPolicy([{ kind: 'config', name, text }]);
  if (loaded.ok) {
    const compiled = compilePolicy(loaded.policy, loaded.origins);
    return compiled.ok ? [] : compiled.problems;
  }
  return loaded.problems;
}

describe('loadPolicy', () => {
  it('fills defaults for priority, when and the gate options', () => {
    const loaded = loadPolicy([
      { kind: 'config', name: 'sb.yaml', text: 'rules:\n  - { id: a, decision: allow, reason_code: OK }\n' },
    ]);
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.policy.rules[0]).toMatchObject({ id: 'a', priority: 0, when: 'true' });
    expect(loaded.policy.gate).toMatchObject({
      fail_mode_high: 'deny',
      fail_open_low: true,
      capability_ttl_seconds: 300,
    });
  });

  it('ignores config keys it does not own, so the config module can check them', () => {
    const loaded = loadPolicy([{ kind: 'config', name: 'sb.yaml', text: 'channels: {}\nrules: []\n' }]);
    expect(loaded.ok).toBe(true);
  });

  it('rejects an unknown key in a rule and names its file and line', () => {
    const text = 'rules:\n  - id: a\n    decision: deny\n    reason_code: NO\n    whne: "true"\n';
    const [p, ...rest] = problemsOf(text);
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ file: 'sb.yaml', line: 2 });
    expect(p?.message).toMatch(/whne/);
  });

  it('reports every problem, not just the first', () => {
    const text = [
      'rules:',
      '  - { id: a, decision: maybe, reason_code: NO }',
      '  - { id: b, decision: deny, reason_code: lower_case }',
      '  - { id: c, decision: deny, reason_code: NO, match: { runtimes: [claud-code] } }',
      '  - { id: d, decision: deny, reason_code: NO, match: { types: [agent.tool.exploded] } }',
    ].join('\n');
    const problems = problemsOf(text);
    expect(problems.map((p) => [p.line, p.path])).toEqual([
      [2, 'rules.0.decision'],
      [3, 'rules.1.reason_code'],
      [4, 'rules.2.match.runtimes.0'],
      [5, 'rules.3.match.types.0'],
    ]);
    expect(formatProblem(problems[0]!)).toMatch(/^sb\.yaml:2:\d+ rules\.0\.decision: /);
  });

  it('reports a YAML syntax error with its line', () => {
    const problems = problemsOf('rules:\n  - { id: a, decision: deny\n');
    expect(problems[0]?.line).toBeGreaterThanOrEqual(2);
  });

  it('requires a modify rule to say how it modifies, and only a modify rule', () => {
    const text = [
      'rules:',
      '  - { id: a, decision: modify, reason_code: M }',
      '  - { id: b, decision: allow, reason_code: A, input: { x: 1 } }',
      '  - { id: c, decision: modify, reason_code: M, input: { x: 1 }, input_expr: "input" }',
    ].join('\n');
    expect(problemsOf(text).map((p) => p.line)).toEqual([2, 3, 4]);
  });

  it('reports a CEL syntax error at the line of the when', () => {
    const text = 'rules:\n  - id: a\n    decision: deny\n    reason_code: NO\n    when: tool == "Bash" &&\n';
    const [p] = problemsOf(text);
    expect(p).toMatchObject({ file: 'sb.yaml', line: 5, path: 'rule a: when' });
  });

  it('reports a misspelt variable as a lint error instead of a rule that fails at run time', () => {
    const [p] = problemsOf('rules:\n  - { id: a, decision: deny, reason_code: NO, when: tol == "Bash" }\n');
    expect(p?.message).toMatch(/tol/);
  });

  it('rejects a condition that is not a boolean', () => {
    const [p] = problemsOf('rules:\n  - { id: a, decision: deny, reason_code: NO, when: "1 + 2" }\n');
    expect(p?.message).toMatch(/not bool/);
  });

  it('reads policy files by glob, in name order, and reports duplicate ids with both places', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gate-'));
    mkdirSync(join(dir, 'policy'));
    writeFileSync(join(dir, 'policy', 'b.yaml'), 'rules:\n  - { id: b1, decision: deny, reason_code: B }\n');
    writeFileSync(join(dir, 'policy', 'a.yaml'), 'rules:\n  - { id: a1, decision: allow, reason_code: A }\n');
    writeFileSync(join(dir, 'policy', 'notes.txt'), 'not yaml: [');
    const config =
      'policy_files: ["./policy/*.yaml"]\nrules:\n  - { id: c1, decision: allow, reason_code: C }\n';
    const loaded = loadPolicy([{ kind: 'config', name: join(dir, 'sb.yaml'), text: config }]);
    expect(loaded.ok && loaded.policy.rules.map((r) => r.id)).toEqual(['c1', 'a1', 'b1']);

    writeFileSync(
      join(dir, 'policy', 'c.yaml'),
      'rules:\n  - { id: x, decision: deny, reason_code: B }\n  - { id: c1, decision: deny, reason_code: B }\n',
    );
    const again = loadPolicy([{ kind: 'config', name: join(dir, 'sb.yaml'), text: config }]);
    expect(again.ok).toBe(false);
    if (again.ok) return;
    expect(again.problems).toHaveLength(1);
    expect(again.problems[0]).toMatchObject({ file: join(dir, 'policy', 'c.yaml'), line: 3 });
    expect(again.problems[0]?.message).toContain(`first at ${join(dir, 'sb.yaml')}:3`);
  });

  it('reports a named policy file that does not exist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gate-'));
    const loaded = loadPolicy([
      { kind: 'config', name: join(dir, 'sb.yaml'), text: 'policy_files: [./nope.yaml]\n' },
    ]);
    expect(!loaded.ok && loaded.problems[0]).toMatchObject({ line: 1, path: 'policy_files.0' });
  });

  it('keeps gate options out of policy files', () => {
    const loaded = loadPolicy([
      { kind: 'text', name: 'p.yaml', text: 'gate: { fail_open_low: false }\nrules: []\n' },
    ]);
    expect(!loaded.ok && loaded.problems[0]).toMatchObject({ file: 'p.yaml', line: 1 });
  });

  it('rejects a tool schema that is not a JSON Schema', () => {
    const text = 'gate:\n  tool_schemas:\n    Deploy: { type: nonsense }\nrules: []\n';
    expect(problemsOf(text)[0]?.message).toMatch(/Deploy/);
  });
});
