import { describe, expect, it } from 'vitest';
import { canonicalArgs, hostOf } from './args.js';
import { compilePolicy } from './compile.js';
import { defaultGateOptions } from './config.js';
import { evaluate } from './evaluate.js';
import { ruleSchema } from './config.js';

function policy(rules: unknown[]) {
  const compiled = compilePolicy({
    rules: rules.map((r) => ruleSchema.parse(r)),
    gate: defaultGateOptions(),
  });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.compiled;
}

describe('canonicalArgs', () => {
  it('lists the adapter’s keys first, then the canonical ones, as `{ ...args, command, … }` would', () => {
    const shapes = [
      { command: 'ls', cwd: '/w' },
      { url: 'https://a.example/x' },
      { cwd: '/w', command: 'ls' },
      { path: '/a', extra: 3, command: 'x' },
      { paths: ['/a', '/b'] },
      {},
    ];
    for (const args of shapes) {
      const got = canonicalArgs({ kind: 'shell', args });
      const spread = { ...args, ...Object.fromEntries(Object.entries(got).filter(([k]) => !(k in args))) };
      expect(Object.keys(got)).toEqual(Object.keys({ ...args, ...got }));
      expect(got).toEqual(spread);
    }
  });

  it('gives a shell intent its argv and commands, and every field CEL may ask for', () => {
    const a = canonicalArgs({ kind: 'shell', args: { command: 'cd x && git push -f', cwd: '/w' } });
    expect(a.argv).toEqual(['cd', 'x', '&&', 'git', 'push', '-f']);
    expect(a.commands.map((c) => c.program)).toEqual(['cd', 'git']);
    expect(a).toMatchObject({ path: '', paths: [], url: '', host: '', query: '', server: '', tool: '' });
  });

  it('gives a fetch its host and a file its paths', () => {
    expect(canonicalArgs({ kind: 'web.fetch', args: { url: 'https://Docs.Example.com:8443/x' } }).host).toBe(
      'docs.example.com',
    );
    expect(canonicalArgs({ kind: 'file.read', args: { path: '/w/.env' } }).paths).toEqual(['/w/.env']);
    expect(hostOf('not a url')).toBe('');
  });
});

describe('rules in canonical terms', () => {
  const decide = (rules: unknown[], kind: 'shell' | 'file.read', args: Record<string, unknown>, tool = 'X') =>
    evaluate(policy(rules), { tool, input: {}, kind, args }).decision;

  it('match a git force push however it is written, and nothing else', () => {
    const rules = [
      {
        id: 'no-force-push',
        when: 'kind == "shell" && args.commands.exists(c, c.program == "git" && c.subcommand == "push" && (hasFlag(c, "-f") || hasFlag(c, "--force") || hasFlag(c, "--force-with-lease")))',
        decision: 'deny',
        reason_code: 'FORCE_PUSH',
      },
    ];
    for (const command of [
      'cd x && git push -f',
      'git -C x push --force-with-lease',
      'git push -fu origin main',
      "bash -c 'git push --force'",
      'sudo git push --force=true',
    ])
      expect(decide(rules, 'shell', { command }), command).toBe('deny');
    for (const command of ['git push', 'git commit -m "push -f"', 'echo git push --force', 'git fetch -f'])
      expect(decide(rules, 'shell', { command }), command).toBe('allow');
  });

  it('are indexed by match.kinds: a shell rule is never evaluated for a read', () => {
    const compiled = policy([
      { id: 'shell-only', match: { kinds: ['shell'] }, decision: 'deny', reason_code: 'SHELL' },
      {
        id: 'bash-shell',
        match: { tools: ['Bash'], kinds: ['shell'] },
        decision: 'deny',
        reason_code: 'BASH',
      },
    ]);
    expect(compiled.candidates('agent.tool.requested', null, 'Read', 'file.read')).toEqual([]);
    expect(
      compiled.candidates('agent.tool.requested', null, 'terminal', 'shell').map((r) => r.rule.id),
    ).toEqual(['shell-only']);
    expect(compiled.candidates('agent.tool.requested', null, 'Bash', 'shell').map((r) => r.rule.id)).toEqual([
      'shell-only',
      'bash-shell',
    ]);
  });

  it('give the shell helpers to CEL: shellSplit, shellCommands, urlHost, basename', () => {
    const rules = [
      {
        id: 'helpers',
        when: 'shellSplit(input.command)[1] == "push" && shellCommands(input.command).size() == 2 && urlHost("https://A.example/x") == "a.example" && basename(args.path) == ".env"',
        decision: 'deny',
        reason_code: 'HELPERS',
      },
    ];
    const d = evaluate(policy(rules), {
      tool: 'Bash',
      input: { command: 'git push | tee log' },
      kind: 'file.read',
      args: { path: '/w/.env' },
    });
    expect(d.decision).toBe('deny');
  });

  it('refuse an unknown kind at load with the list of kinds', () => {
    const parsed = ruleSchema.safeParse({
      id: 'x',
      match: { kinds: ['shel'] },
      decision: 'deny',
      reason_code: 'X',
    });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('one of shell, file.read');
  });
});
