import { describe, expect, it } from 'vitest';
import { globToRegExp, policyRevision } from './compile.js';
import { loadPolicy } from './load.js';
import { compileYaml } from './testing.js';

const policyOf = (text: string) => {
  const loaded = loadPolicy([{ kind: 'config', name: 'sb.yaml', text }]);
  if (!loaded.ok) throw new Error('bad policy');
  return loaded.policy;
};

describe('policyRevision', () => {
  const text = 'rules:\n  - { id: a, decision: deny, reason_code: A, when: \'tool == "Bash"\' }\n';

  it('is rev_ and 16 hex characters, the same for the same policy', () => {
    expect(policyRevision(policyOf(text))).toMatch(/^rev_[0-9a-f]{16}$/);
    expect(policyRevision(policyOf(text))).toBe(policyRevision(policyOf(text)));
  });

  it('ignores comments and layout but not meaning', () => {
    const reflowed =
      '# the one rule\nrules:\n  - id: a\n    decision: deny\n    reason_code: A\n    when: tool == "Bash"\n';
    expect(policyRevision(policyOf(reflowed))).toBe(policyRevision(policyOf(text)));
    expect(policyRevision(policyOf(text.replace('deny', 'defer')))).not.toBe(policyRevision(policyOf(text)));
    expect(policyRevision(policyOf(`${text}gate: { fail_mode_high: defer }\n`))).not.toBe(
      policyRevision(policyOf(text)),
    );
  });
});

describe('candidates', () => {
  const p = compileYaml(
    [
      'rules:',
      '  - { id: any-low, priority: -1, decision: allow, reason_code: A }',
      '  - { id: bash, match: { tools: [Bash, Sh] }, decision: allow, reason_code: A }',
      '  - { id: glob, priority: 9, match: { tools: ["mcp__*", "Ba*"] }, decision: allow, reason_code: A }',
      '  - { id: any, decision: allow, reason_code: A }',
    ].join('\n'),
  );
  const ids = (tool: string) => p.candidates('agent.tool.requested', null, tool).map((r) => r.rule.id);

  it('holds only the rules that can match, by priority then policy order, each once', () => {
    expect(ids('Bash')).toEqual(['glob', 'bash', 'any', 'any-low']);
    expect(ids('Read')).toEqual(['any', 'any-low']);
    expect(ids('mcp__x__y')).toEqual(['glob', 'any', 'any-low']);
  });

  it('returns the same answer from its cache', () => {
    expect(p.candidates('agent.tool.requested', null, 'Bash')).toBe(
      p.candidates('agent.tool.requested', null, 'Bash'),
    );
  });
});

describe('globToRegExp', () => {
  it('treats only * as a wildcard', () => {
    expect(globToRegExp('mcp__*').test('mcp__github__x')).toBe(true);
    expect(globToRegExp('a.b').test('aXb')).toBe(false);
    expect(globToRegExp('Bash').test('Bash2')).toBe(false);
  });
});
