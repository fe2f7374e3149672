import { describe, expect, it } from 'vitest';
import { checkCapability } from './capability.js';
import { planDigest } from '../envelope/plan.js';
import { evaluate, evaluateWithTrace, mergePatch } from './evaluate.js';
import { compileYaml, TEST_KEY } from './testing.js';
import type { Intent } from './types.js';

const bash = (command: string, extra: Partial<Intent> = {}): Intent => ({
  tool: 'Bash',
  input: { command },
  runtime: 'claude-code',
  ...extra,
});
const read: Intent = { tool: 'Read', input: { file_path: '/etc/hosts' }, runtime: 'claude-code' };

function policy(rules: string[], gate = ''): ReturnType<typeof compileYaml> {
  return compileYaml(`${gate ? `gate: ${gate}\n` : ''}rules:\n${rules.map((r) => `  - ${r}`).join('\n')}\n`);
}

describe('evaluate: each decision kind', () => {
  const p = policy([
    '{ id: no-force-push, when: \'input.command.contains("push --force")\', decision: deny, reason_code: FORCE_PUSH }',
    '{ id: deploy, when: \'input.command.startsWith("deploy")\', decision: require_approval, reason_code: DEPLOY }',
    '{ id: prod-state, when: \'input.command.contains("prod")\', decision: defer, reason_code: WAIT_FOR_STATE }',
    '{ id: ls, when: \'input.command == "ls"\', decision: allow, reason_code: LISTING }',
    '{ id: dry, when: \'input.command == "make"\', decision: modify, reason_code: DRY_RUN, input: { command: "make -n" } }',
  ]);

  it.each([
    ['git push --force', 'deny', 'FORCE_PUSH'],
    ['deploy web', 'require_approval', 'DEPLOY'],
    ['cat prod.env', 'defer', 'WAIT_FOR_STATE'],
    ['ls', 'allow', 'LISTING'],
    ['make', 'modify', 'DRY_RUN'],
    ['echo hi', 'allow', 'NO_RULE_MATCHED'],
  ])('decides %j as %s with %s', (command, decision, reason) => {
    const d = evaluate(p, bash(command));
    expect(d).toMatchObject({ decision, reason_code: reason, policy_revision: p.revision });
    expect(d.plan_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('returns the decision contract and nothing else', () => {
    const d = evaluate(p, bash('ls'), { signer: { keys: [TEST_KEY] } });
    expect(Object.keys(d).sort()).toEqual(
      [
        'capability',
        'constraints',
        'decision',
        'matched_rules',
        'plan_digest',
        'policy_revision',
        'reason_code',
      ].sort(),
    );
    expect(d.capability?.id).toMatch(/^cap_/);
  });
});

describe('evaluate: merging', () => {
  const kinds = ['allow', 'modify', 'require_approval', 'defer', 'deny'] as const;
  const all = policy(
    kinds.map((k, i) => {
      const patch = k === 'modify' ? ', input: { description: "x" }' : '';
      return `{ id: r${i}, priority: ${10 - i}, decision: ${k}, reason_code: ${k.toUpperCase()}${patch}, when: 'input.command.contains("${k}")' }`;
    }),
  );

  it('ranks deny > defer > require_approval > modify > allow, whatever the priorities', () => {
    for (let hi = 1; hi < kinds.length; hi++) {
      for (let lo = 0; lo < hi; lo++) {
        const d = evaluate(all, bash(`${kinds[lo]} ${kinds[hi]}`));
        expect(d.decision, `${kinds[lo]} vs ${kinds[hi]}`).toBe(kinds[hi]);
      }
    }
  });

  it('records every matching rule, highest priority first', () => {
    const d = evaluate(all, bash('allow modify require_approval defer deny'));
    expect(d.matched_rules).toEqual(kinds.map((k, i) => ({ id: `r${i}`, decision: k })));
  });

  it('lets the higher priority rule speak for its level', () => {
    const p = policy([
      '{ id: low, priority: 1, decision: deny, reason_code: LOW }',
      '{ id: high, priority: 5, decision: deny, reason_code: HIGH }',
    ]);
    expect(evaluate(p, bash('x')).reason_code).toBe('HIGH');
  });

  it('breaks a priority tie by policy order, every time', () => {
    const p = policy([
      '{ id: first, decision: require_approval, reason_code: FIRST }',
      '{ id: second, decision: require_approval, reason_code: SECOND }',
    ]);
    for (let i = 0; i < 5; i++) expect(evaluate(p, bash('x')).reason_code).toBe('FIRST');
  });

  it('merges constraints of all matched rules, the winner first on a clash', () => {
    const p = policy([
      '{ id: a, decision: allow, reason_code: A, constraints: { network: open, timeout: 10 } }',
      '{ id: b, priority: 2, decision: require_approval, reason_code: B, constraints: { network: none } }',
    ]);
    expect(evaluate(p, bash('x')).constraints).toEqual({ network: 'none', timeout: 10 });
  });

  it('uses the configured default when no rule matches', () => {
    const p = policy(
      ['{ id: a, decision: deny, reason_code: A, when: "false" }'],
      '{ default_decision: { high: require_approval } }',
    );
    expect(evaluate(p, bash('x'))).toMatchObject({
      decision: 'require_approval',
      reason_code: 'NO_RULE_MATCHED',
    });
    expect(evaluate(p, read)).toMatchObject({ decision: 'allow', reason_code: 'NO_RULE_MATCHED' });
  });
});

describe('evaluate: the index', () => {
  const p = policy([
    '{ id: bash-only, match: { tools: [Bash] }, when: \'input.command.contains("rm")\', decision: deny, reason_code: RM }',
    '{ id: mcp, match: { tools: ["mcp__github__*"] }, when: \'input.repo == "x"\', decision: deny, reason_code: MCP }',
    '{ id: codex, match: { runtimes: [codex] }, decision: deny, reason_code: CODEX }',
    '{ id: notify, match: { types: [agent.notification.raised] }, decision: deny, reason_code: NOTE }',
    '{ id: everywhere, decision: allow, reason_code: ANY }',
  ]);

  it('never evaluates a rule written for another tool', () => {
    // bash-only would throw on Read's input (no `command`): no error proves it never ran.
    const { trace } = evaluateWithTrace(p, read);
    expect(trace.considered).toEqual(['everywhere']);
    expect(trace.errors).toEqual([]);
  });

  it('finds exact and glob tool rules for their tools', () => {
    expect(evaluateWithTrace(p, bash('ls')).trace.considered).toEqual(['bash-only', 'everywhere']);
    const mcp = evaluateWithTrace(p, { tool: 'mcp__github__create_issue', input: { repo: 'x' } });
    expect(mcp.trace.considered).toEqual(['mcp', 'everywhere']);
    expect(mcp.decision.reason_code).toBe('MCP');
    expect(evaluateWithTrace(p, { tool: 'mcp__gitlab__x', input: {} }).trace.considered).toEqual([
      'everywhere',
    ]);
  });

  it('filters by runtime and event type', () => {
    expect(evaluate(p, bash('ls', { runtime: 'codex' })).reason_code).toBe('CODEX');
    expect(evaluate(p, bash('ls', { runtime: null })).reason_code).toBe('ANY');
    expect(evaluate(p, bash('ls', { event_type: 'agent.notification.raised' })).reason_code).toBe('NOTE');
  });
});

describe('evaluate: what CEL sees', () => {
  it('reads JSON integers as CEL ints, so arithmetic needs no casts', () => {
    const p = policy([
      '{ id: n, when: "input.count + 1 > 3 && input.ratio > 0.5", decision: deny, reason_code: N }',
    ]);
    expect(evaluate(p, { tool: 'X', input: { count: 3, ratio: 0.75 } }).decision).toBe('deny');
    expect(evaluate(p, { tool: 'X', input: { count: 2, ratio: 0.75 } }).decision).toBe('allow');
  });

  it('stops a runaway loop on the task step counter and wall time', () => {
    const p = policy([
      '{ id: steps, when: "task.steps >= 50", decision: deny, reason_code: STEP_BUDGET }',
      '{ id: time, when: "task.wall_time_seconds > 3600", decision: defer, reason_code: TIME_BUDGET }',
    ]);
    expect(evaluate(p, bash('ls'), { task: { steps: 49 } }).decision).toBe('allow');
    expect(evaluate(p, bash('ls'), { task: { steps: 50 } }).reason_code).toBe('STEP_BUDGET');
    expect(evaluate(p, bash('ls'), { task: { wall_time_seconds: 3601 } }).reason_code).toBe('TIME_BUDGET');
  });

  it('exposes owner, action, resource, runtime, envelope, budgets and now', () => {
    const when = [
      'task.owner == "ana"',
      'action == "deploy"',
      'resource == "svc/web"',
      'runtime == "claude-code"',
      'envelope.tenant_id == "t1"',
      'budgets.usd < 5.0',
      'now.getFullYear() == 2026',
    ].join(' && ');
    const p = policy([`{ id: all, when: '${when}', decision: deny, reason_code: ALL }`]);
    const d = evaluate(p, bash('x', { action: 'deploy', resource: 'svc/web' }), {
      task: { owner: 'ana' },
      envelope: { tenant_id: 't1' },
      budgets: { usd: 1.5 },
      now: new Date('2026-11-29T12:00:00Z'),
    });
    expect(d.reason_code).toBe('ALL');
  });
});

describe('evaluate: failing closed and open', () => {
  // `input.command` throws "No such key" on an input without one.
  const throwing = '{ id: fragile, when: \'input.command.contains("x")\', decision: deny, reason_code: X }';

  it('denies a high-risk intent when a rule errors', () => {
    const d = evaluateWithTrace(policy([throwing]), { tool: 'Deploy', input: {} });
    expect(d.decision).toMatchObject({ decision: 'deny', reason_code: 'POLICY_ERROR' });
    expect(d.trace.errors[0]).toMatchObject({ rule_id: 'fragile' });
    expect(d.trace.errors[0]?.message).toMatch(/command/);
  });

  it('counts a condition that yields a non-bool at run time as an error', () => {
    const p = policy(['{ id: str, when: "input.flag", decision: deny, reason_code: X }']);
    const { decision, trace } = evaluateWithTrace(p, { tool: 'Deploy', input: { flag: 'yes' } });
    expect(decision.reason_code).toBe('POLICY_ERROR');
    expect(trace.errors[0]?.message).toMatch(/not bool/);
  });

  it('defers instead where configured', () => {
    const d = evaluate(policy([throwing], '{ fail_mode_high: defer }'), { tool: 'Deploy', input: {} });
    expect(d).toMatchObject({ decision: 'defer', reason_code: 'POLICY_ERROR' });
  });

  it('lets a read-only intent through tagged policy_unavailable, without a capability', () => {
    const d = evaluate(policy([throwing]), read, { signer: { keys: [TEST_KEY] } });
    expect(d).toMatchObject({ decision: 'allow', reason_code: 'POLICY_UNAVAILABLE' });
    expect(d.constraints).toEqual({ policy_unavailable: true });
    expect(d.capability).toBeUndefined();
  });

  it('still applies the rules that worked when it fails open', () => {
    const p = policy([
      throwing,
      '{ id: hosts, when: \'input.file_path == "/etc/hosts"\', decision: deny, reason_code: HOSTS }',
    ]);
    expect(evaluate(p, read)).toMatchObject({
      decision: 'deny',
      reason_code: 'HOSTS',
      constraints: { policy_unavailable: true },
    });
  });

  it('fails closed for read-only too when fail_open_low is off', () => {
    expect(evaluate(policy([throwing], '{ fail_open_low: false }'), read).reason_code).toBe('POLICY_ERROR');
  });

  it('treats an intent as high risk when an erroring rule says so', () => {
    const p = policy(['{ id: f, risk: high, when: "input.nope", decision: deny, reason_code: X }']);
    expect(evaluate(p, read)).toMatchObject({ decision: 'deny', reason_code: 'POLICY_ERROR' });
  });

  it('takes risk from a matched rule before the read-only list', () => {
    const p = policy([
      '{ id: secrets, risk: high, when: \'input.file_path.startsWith("/etc")\', decision: allow, reason_code: R }',
      throwing,
    ]);
    expect(evaluate(p, read).reason_code).toBe('POLICY_ERROR');
  });

  it('fails closed on a high-risk intent when no revision is loaded, open on a read-only one', () => {
    expect(evaluate(undefined, bash('ls'))).toMatchObject({
      decision: 'deny',
      reason_code: 'POLICY_UNAVAILABLE',
      policy_revision: 'none',
    });
    expect(evaluate(undefined, read)).toMatchObject({
      decision: 'allow',
      constraints: { policy_unavailable: true },
    });
  });

  it('denies an input over the size cap', () => {
    const p = policy(['{ id: a, decision: allow, reason_code: A }'], '{ max_input_bytes: 1024 }');
    expect(evaluate(p, bash('x'.repeat(2000))).reason_code).toBe('INPUT_TOO_LARGE');
    expect(evaluate(p, read).reason_code).toBe('A');
  });

  it('denies an unknown event type and an input that is not an object', () => {
    const p = policy(['{ id: a, decision: allow, reason_code: A }']);
    expect(evaluate(p, bash('ls', { event_type: 'agent.tool.exploded' })).reason_code).toBe(
      'UNKNOWN_EVENT_TYPE',
    );
    expect(evaluate(p, { tool: 'Bash', input: [] as unknown as Record<string, unknown> }).reason_code).toBe(
      'INPUT_INVALID',
    );
  });

  it('denies every high-risk intent of a frozen agent, and only those', () => {
    const p = policy(['{ id: a, decision: allow, reason_code: A }']);
    expect(evaluate(p, bash('ls'), { frozen: true }).reason_code).toBe('FROZEN_READ_ONLY');
    expect(evaluate(p, read, { frozen: true }).decision).toBe('allow');
  });
});

describe('evaluate: modify', () => {
  it('applies a merge patch, digests the replacement and binds the capability to it', () => {
    const p = policy([
      '{ id: bg, decision: modify, reason_code: NO_BG, input: { run_in_background: null, timeout: 60000 } }',
    ]);
    const intent = bash('npm test');
    intent.input['run_in_background'] = true;
    const { decision, trace } = evaluateWithTrace(p, intent, { signer: { keys: [TEST_KEY] } });
    expect(decision.input).toEqual({ command: 'npm test', timeout: 60000 });
    const plan = { tool: 'Bash', input: decision.input ?? {} };
    expect(decision.plan_digest).toBe(planDigest(plan));
    expect(trace.original_plan_digest).toBe(planDigest({ tool: 'Bash', input: intent.input }));
    expect(trace.modify).toMatchObject({ rule_id: 'bg', original: intent.input });
    const verdict = checkCapability(decision.capability?.token ?? '', {
      keys: [TEST_KEY],
      plan,
      now: new Date(),
    });
    expect(verdict.ok).toBe(true);
  });

  it('computes the replacement with CEL when the rule gives input_expr', () => {
    const p = policy([
      '{ id: dry, decision: modify, reason_code: DRY, input_expr: \'{"command": input.command + " --dry-run", "timeout": 30000}\' }',
    ]);
    expect(evaluate(p, bash('terraform apply')).input).toEqual({
      command: 'terraform apply --dry-run',
      timeout: 30000,
    });
  });

  it('fails closed when the replacement breaks the tool schema', () => {
    const p = policy(['{ id: bad, decision: modify, reason_code: BAD, input: { command: 5 } }']);
    expect(evaluate(p, bash('ls'))).toMatchObject({ decision: 'deny', reason_code: 'MODIFY_INVALID_INPUT' });
  });

  it('fails closed when the tool has no known schema, unless the config gives one', () => {
    const rule = '{ id: m, decision: modify, reason_code: M, input: { env: staging } }';
    const deploy: Intent = { tool: 'Deploy', input: { env: 'prod' } };
    expect(evaluate(policy([rule]), deploy).reason_code).toBe('MODIFY_SCHEMA_UNKNOWN');
    const known = policy([rule], '{ tool_schemas: { Deploy: { type: object, required: [env] } } }');
    expect(evaluate(known, deploy)).toMatchObject({ decision: 'modify', input: { env: 'staging' } });
  });

  it('takes the higher priority one of two modifies, and loses to require_approval', () => {
    const p = policy([
      '{ id: m1, decision: modify, reason_code: M1, input: { timeout: 1000 } }',
      '{ id: m2, priority: 3, decision: modify, reason_code: M2, input: { timeout: 2000 } }',
      '{ id: ask, decision: require_approval, reason_code: ASK, when: \'input.command == "deploy"\' }',
    ]);
    expect(evaluate(p, bash('ls'))).toMatchObject({
      reason_code: 'M2',
      input: { command: 'ls', timeout: 2000 },
    });
    const asked = evaluate(p, bash('deploy'));
    expect(asked).toMatchObject({ decision: 'require_approval' });
    expect(asked.input).toBeUndefined();
  });
});

describe('evaluate: capabilities', () => {
  it('issues one on allow, bound to tenant, task and the asked plan', () => {
    const p = policy(['{ id: a, decision: allow, reason_code: A }']);
    const now = new Date('2026-11-29T12:00:00Z');
    const intent = bash('ls', { resource: 'repo/x' });
    const d = evaluate(p, intent, {
      signer: { keys: [TEST_KEY], ttl_seconds: 60 },
      tenant_id: 't1',
      task: { id: 'tsk_1' },
      now,
    });
    expect(d.capability?.expires_at).toBe('2026-11-29T12:01:00.000Z');
    const verdict = checkCapability(d.capability?.token ?? '', {
      keys: [TEST_KEY],
      plan: intent,
      now,
      expect: { tenant: 't1', task: 'tsk_1', policy_revision: p.revision },
    });
    expect(verdict.ok).toBe(true);
  });

  it('issues none for deny, defer or require_approval', () => {
    const p = policy(['{ id: a, decision: require_approval, reason_code: A }']);
    expect(evaluate(p, bash('ls'), { signer: { keys: [TEST_KEY] } }).capability).toBeUndefined();
  });
});

describe('mergePatch', () => {
  it('follows RFC 7386: objects merge, null deletes, arrays replace', () => {
    expect(
      mergePatch({ a: 1, b: { c: 1, d: 2 }, e: [1] }, { a: null, b: { c: null, x: 1 }, e: [2] }),
    ).toEqual({
      b: { d: 2, x: 1 },
      e: [2],
    });
  });
});

describe('the examples in docs/policy.md', () => {
  const p = compileYaml(
    [
      'rules:',
      '  - { id: no-force-push, when: \'tool == "Bash" && input.command.contains("push --force")\', decision: deny, reason_code: FORCE_PUSH }',
      '  - { id: no-background, match: { tools: [Bash] }, decision: modify, reason_code: NO_BACKGROUND,',
      '      input: { run_in_background: null, timeout: 600000 } }',
      '  - { id: tf-plan, match: { tools: [Bash] }, when: \'input.command.startsWith("terraform apply")\',',
      '      decision: modify, reason_code: TF_DRY_RUN, priority: 1,',
      '      input_expr: \'{"command": "terraform plan" + input.command.substring(15)}\' }',
    ].join('\n'),
  );

  it('work as documented', () => {
    expect(evaluate(p, bash('git push --force')).reason_code).toBe('FORCE_PUSH');
    expect(evaluate(p, bash('ls', { input: { command: 'ls', run_in_background: true } })).input).toEqual({
      command: 'ls',
      timeout: 600000,
    });
    expect(evaluate(p, bash('terraform apply -auto-approve')).input).toEqual({
      command: 'terraform plan -auto-approve',
    });
  });
});

describe('evaluate: the plan digest', () => {
  const p = policy(['{ id: ls, when: \'tool == "ls"\', decision: allow, reason_code: LISTING }']);
  it.each<Intent>([
    bash('npm test'),
    { tool: 'Write', input: { file_path: '/tmp/ä €.txt', content: 'a\nb\t"q" \u2028 😀' }, runtime: 'codex' },
    { tool: 'mcp__s__t', input: { z: 1, a: [1.5, 1e21, -0, { b: null, a: true }], m: {} }, action: 'apply' },
    { tool: 'deploy', input: { n: 2 }, action: 'release', resource: 'k8s/prod' },
  ])(
    'is planDigest of the plan, computed from the one serialization that also sizes the input (%#)',
    (intent) => {
      const { decision, trace } = evaluateWithTrace(p, intent);
      const want = planDigest({
        ...intent,
        action: intent.action ?? null,
        resource: intent.resource ?? null,
      });
      expect(decision.plan_digest).toBe(want);
      expect(trace.original_plan_digest).toBe(want);
    },
  );

  it('denies an input that has no canonical form as INPUT_INVALID', () => {
    expect(evaluate(p, { tool: 'Bash', input: { command: 'x\ud800' } }).reason_code).toBe('INPUT_INVALID');
  });
});
