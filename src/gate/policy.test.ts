import { describe, expect, it } from 'vitest';
import { evaluateWithTrace } from './evaluate.js';
import { explainEvaluation } from './explain.js';
import { preparePolicy } from './policy.js';

const good =
  'rules:\n  - { id: no-force-push, when: \'input.command.contains("push --force")\', decision: deny, reason_code: FORCE_PUSH }\n';

describe('preparePolicy', () => {
  it('loads and compiles a policy in one step', () => {
    const prepared = preparePolicy([{ kind: 'config', name: 'sb.yaml', text: good }]);
    expect(prepared.ok && prepared.compiled.revision).toMatch(/^rev_/);
  });

  it('returns problems from both loading and compiling, leaving the caller’s revision alone', () => {
    const broken = preparePolicy([
      { kind: 'config', name: 'sb.yaml', text: good.replace('contains(', 'contains((') },
    ]);
    expect(!broken.ok && broken.problems[0]).toMatchObject({ file: 'sb.yaml', line: 2 });
  });
});

describe('explainEvaluation', () => {
  it('says what was decided, by which rule, under which revision', () => {
    const prepared = preparePolicy([{ kind: 'config', name: 'sb.yaml', text: good }]);
    if (!prepared.ok) throw new Error('policy');
    const evaluation = evaluateWithTrace(prepared.compiled, {
      tool: 'Bash',
      input: { command: 'git push --force' },
    });
    const text = explainEvaluation(evaluation, prepared.compiled).join('\n');
    expect(text).toContain('decision: deny (FORCE_PUSH)');
    expect(text).toContain(`policy revision: ${prepared.compiled.revision}`);
    expect(text).toMatch(/matched no-force-push: deny FORCE_PUSH priority 0/);
  });
});
