import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { benchRules } from '../../bench/gate.js';
import { celClosure, UNSURE } from '../cel/closures.js';
import { celMessage } from '../cel/environment.js';
import { CLOSURE_FUNCTIONS, compileCel } from './cel.js';
import { compilePolicy } from './compile.js';
import { policyConfigSchema } from './config.js';
import { HistoryWindow } from './history.js';
import { INDEX_VARIABLE } from './history-index.js';

/**
 * The closures (src/cel/closures.ts) against cel-js: every rule condition of the docs, the tests and
 * the benches, and the shapes the closures model at their edges, over random contexts holding every
 * kind of value a context can (missing keys, wrong types, maps as objects and as Maps, overflowing
 * ints, NaN, invalid patterns). Each must give cel-js's value, or cel-js's error with its message.
 */
const CORPUS = [
  '".env" in session.files',
  '"web.fetch" in session.kinds && args.commands.exists(c, c.program == "curl")',
  '"web.fetch" in session.kinds && args.commands.exists(c, c.program in ["curl", "wget"])',
  '"web.fetch" in session.kinds && now.getFullYear() > 2000',
  'action == "reach.sql" && resource == "reach:write"',
  'args.command.contains("rm -rf")',
  'args.command.startsWith("deploy") && now < timestamp("2026-06-01T10:01:00Z")',
  'args.commands.exists(c, c.program == "git" && hasFlag(c, "--force"))',
  'args.commands.exists(c, c.program == "rm" && hasFlag(c, "-r"))',
  'envelope.type == "agent.tool.requested" && runtime == "codex"',
  'has(budgets.cost_left_today) && budgets.cost_left_today <= 0 && kind != "file.read"',
  'has(budgets.steps_left) && budgets.steps_left < 2',
  'has(input.run_in_background)',
  'history.exists(h, h.kind == "file.read" && h.paths.exists(p, basename(p) == ".env"))',
  'history.exists(h, h.kind == "web.fetch") && args.commands.exists(c, c.program in ["curl", "wget"])',
  'history.exists(h, h.kind == "web.fetch")',
  'history.exists(e, args.host == e.host)',
  'history.exists(h, h.untrusted) && args.commands.exists(c, c.program in ["curl", "wget"])',
  'args.commands.exists(c, history.exists(h, h.tool == c.program && h.decision != "deny"))',
  'history.exists(h, h.kind == kind && h.paths.size() > 0)',
  'history.all(h, h.decision != "deny")',
  'input.command == "ls"',
  'input.missing == "x"',
  'input.old_string + 1 == 2',
  'input.pattern.matches(input.pattern)',
  'input.command.matches("^curl.*-v[0-9]$")',
  'kind == "agent.delegate" && resource.startsWith("agent:db-admin/")',
  'kind == "shell" && args.command.contains("push --force")',
  'kind == "shell" && args.commands.exists(c, c.program == "git" && c.subcommand == "push" && (hasFlag(c, "-f") || hasFlag(c, "--force") || hasFlag(c, "--force-with-lease")))',
  'resource == "k8s/prod" && action != "read"',
  'session.untrusted && !(args.host in session.hosts)',
  'session.untrusted && !history.exists(h, h.kind == "web.fetch" && h.host == args.host)',
  'session.untrusted',
  'shellSplit(input.command)[1] == "push" && shellCommands(input.command).size() == 2',
  'urlHost(input.url) == "a.example" && basename(args.path) == ".env"',
  'task.steps >= 50 || task.wall_time_seconds > 7200',
  'task.wall_time_seconds > 3600 && budgets.steps == task.steps',
  'tool == "Bash" && input.command.contains("push --force")',
  'tool == "count.up" && has(input.n) && input.n == 13',
  // the edges of what the closures model
  'input.n == 1',
  'input.n == 1.0 || input.n != "1"',
  'input.n < 2.5 && input.n >= -3',
  'input.n + input.m > 3',
  'input.n - 1 == -2',
  'input.s + "x" == "ax"',
  '"k" in input.m',
  'input.s in ["a", "b"]',
  'input.n in [1, 2]',
  'input.flag in [true]',
  'input.l.exists(x, x == "a")',
  'input.l.all(x, x.startsWith("a"))',
  'input.l.exists(x, x.k == "v")',
  'input.l.size() > 1',
  'has(input.m.k)',
  'has(input.m.k.j)',
  '!input.flag',
  'input.flag ? input.s == "x" : input.n == 2',
  'input.flag && input.s == "a" || input.n > 1',
  'input.m.k == "v"',
  'input.s.matches(input.t)',
  'input.s.endsWith(input.t)',
  'hasFlag(args.argv, "-f") || hasFlag(input.l, "-f")',
  'hasFlag(input.m, "-f")',
  'basename(input.s) == "a"',
  'tool in ["Bash", "shell"] && kind.startsWith("file")',
  'input.x != null',
  'input == input',
  '[input.s, "b"].exists(x, x == "b")',
  'input.l.exists(x, input.l.exists(x, x == "a"))',
];

/** A deterministic pseudo-random stream, so a failure replays. */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
}

const STRINGS = [
  '',
  'a',
  'ab',
  'x',
  '1',
  'v',
  'Bash',
  'shell',
  'curl',
  'git',
  '-f',
  '.env',
  '/a/.env',
  '^a',
  '(',
  'k8s/prod',
];

function randomValue(r: () => number, depth = 0): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const roll = r();
  if (roll < 0.3) return pick(STRINGS);
  if (roll < 0.4) return pick([0n, 1n, 2n, -3n, 13n, 9223372036854775807n]);
  if (roll < 0.47) return pick([1, 1.5, -3, Number.NaN, 2.5]);
  if (roll < 0.55) return r() < 0.5;
  if (roll < 0.6) return null;
  if (roll < 0.65) return undefined;
  if (depth > 2) return pick(STRINGS);
  if (roll < 0.78) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  if (roll < 0.82) return Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(STRINGS));
  const entries = Array.from(
    { length: Math.floor(r() * 4) },
    () => [pick(['k', 'j', 'a', 'x']), randomValue(r, depth + 1)] as const,
  );
  if (roll < 0.9) return Object.fromEntries(entries);
  if (roll < 0.95) return new Map(entries);
  if (roll < 0.97) return Object.assign(Object.create(null), Object.fromEntries(entries));
  return pick([new Date(0), new Set(['a']), () => 1, { constructor: 'x' }]);
}

function contextOf(r: () => number): Record<string, unknown> {
  const maybe = (v: unknown, odd = 0.1) => (r() < odd ? randomValue(r) : v);
  const strings = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const input: Record<string, unknown> = {};
  for (const key of [
    'command',
    'n',
    'm',
    's',
    't',
    'l',
    'flag',
    'x',
    'url',
    'pattern',
    'old_string',
    'run_in_background',
  ])
    if (r() < 0.7) input[key] = randomValue(r);
  if (r() < 0.5) input.command = strings(['ls', 'git push --force', 'curl -v1 x', 'rm -rf /']);
  const commands = Array.from({ length: Math.floor(r() * 3) }, () =>
    maybe({
      argv: ['git', 'push', '-f'],
      env: [],
      program: maybe(strings(['git', 'curl', 'rm', 'wget'])),
      subcommand: 'push',
      flags: maybe(['-f']),
    }),
  );
  const kinds = new Map<string, bigint>(r() < 0.5 ? [['web.fetch', 1n]] : [['shell', 2n]]);
  return {
    tool: maybe(strings(['Bash', 'Read', 'shell', 'count.up']), 0.05),
    kind: maybe(strings(['shell', 'file.read', 'web.fetch', 'agent.delegate']), 0.05),
    input: maybe(input, 0.05),
    args: maybe(
      {
        command: maybe(strings(['rm -rf x', 'deploy now', 'git push --force'])),
        argv: maybe(['git', '-f']),
        commands,
        path: maybe(strings(['/a/.env', 'b.ts'])),
        host: maybe(strings(['a.example', 'b.example', ''])),
      },
      0.05,
    ),
    history: maybe(
      Array.from({ length: Math.floor(r() * 5) }, () =>
        maybe({
          kind: strings(['shell', 'file.read', 'web.fetch']),
          tool: strings(['git', 'curl', 'Bash']),
          decision: strings(['allow', 'deny']),
          untrusted: maybe(r() < 0.5),
          paths: maybe(['/a/.env']),
          host: maybe(strings(['a.example', 'b.example'])),
        }),
      ),
      0.05,
    ),
    session: maybe(
      {
        untrusted: maybe(r() < 0.5),
        kinds: maybe(kinds),
        files: maybe(new Map([['.env', 1n]])),
        hosts: maybe({ 'a.example': 1n }),
      },
      0.05,
    ),
    action: maybe(strings([null, 'read', 'deploy']), 0.2),
    resource: maybe(strings([null, 'k8s/prod', 'agent:db-admin/x', 'reach:write']), 0.2),
    runtime: maybe(strings([null, 'codex']), 0.1),
    task: maybe({
      steps: maybe(strings([3n, 60n])),
      wall_time_seconds: maybe(strings([100n, 8000n, 7200.5])),
    }),
    envelope: maybe({ type: 'agent.tool.requested' }),
    budgets: maybe({ steps_left: maybe(1n), cost_left_today: maybe(0), steps: maybe(3n) }),
    now: new Date('2026-06-01T10:00:00Z'),
  };
}

type Outcome = { value: unknown } | { error: string };
function run(program: (c: never) => unknown, c: Record<string, unknown>): Outcome {
  try {
    return { value: program(c as never) };
  } catch (err) {
    return { error: celMessage(err) };
  }
}

describe('rule conditions as closures', () => {
  it('give cel-js’s value or cel-js’s error over random contexts, for every condition of the corpus', () => {
    // SEED=n npx vitest run … replays another stream; 4,000 contexts per condition passed for several.
    const r = random(Number(process.env.SEED ?? 11));
    let closures = 0;
    let sure = 0;
    let runs = 0;
    for (const expression of [...CORPUS, ...benchConditions()]) {
      const compiled = compileCel(expression, 'bool');
      if (!compiled.ok) throw new Error(`${expression}: ${compiled.message}`);
      const closure = celClosure((compiled.program as { ast?: unknown }).ast, CLOSURE_FUNCTIONS);
      if (!closure) continue;
      closures++;
      for (let n = 0; n < 300; n++) {
        const c = contextOf(r);
        const reference = run(compiled.program, c);
        const fast = closure(c);
        runs++;
        if (fast === UNSURE) continue;
        sure++;
        // expect() only on a difference: its matcher costs more than both evaluations together.
        if (isDeepStrictEqual({ value: fast }, reference)) continue;
        expect({ expression, outcome: { value: fast } }).toEqual({ expression, outcome: reference });
      }
    }
    // The test means something only if most conditions have a closure that is mostly sure.
    expect(closures).toBeGreaterThan(CORPUS.length * 0.8);
    expect(sure / runs).toBeGreaterThan(0.3);
  }, 60_000);

  it('leave a condition they do not model to cel-js: timestamps, indexing, map literals', () => {
    for (const expression of [
      'now < timestamp("2026-06-01T10:01:00Z")',
      'shellSplit(input.command)[1] == "push"',
      '{"a": 1}.a == 1',
    ]) {
      const compiled = compileCel(expression, 'bool');
      if (!compiled.ok) throw new Error(compiled.message);
      expect(celClosure((compiled.program as { ast?: unknown }).ast, CLOSURE_FUNCTIONS)).toBeUndefined();
    }
  });

  it('decide every rule as cel-js alone does, the window index answering history.exists', () => {
    const conditions = CORPUS.filter((w) => !w.includes('now'));
    const policy = policyConfigSchema.parse({
      rules: conditions.map((when, i) => ({ id: `r${i}`, when, decision: 'deny', reason_code: `R${i}` })),
    });
    const c = compilePolicy({ rules: policy.rules, gate: policy.gate });
    if (!c.ok) throw new Error(JSON.stringify(c.problems));
    const r = random(3);
    for (let n = 0; n < 300; n++) {
      const ctx = contextOf(r);
      // A window holds entries as history.ts writes them; their fields may still be odd.
      const history = (Array.isArray(ctx.history) ? ctx.history : []).filter(
        (e) => typeof e === 'object' && e !== null && Array.isArray(e.paths) && typeof e.kind === 'string',
      );
      const window = new HistoryWindow(history as never);
      const withIndex = {
        ...ctx,
        history: window.entries,
        [INDEX_VARIABLE]: window.index(c.compiled.history),
      };
      for (const rule of c.compiled.rules) {
        const reference = run(rule.celWhen!, withIndex);
        expect({ rule: rule.rule.when, outcome: run(rule.when!, withIndex) }).toEqual({
          rule: rule.rule.when,
          outcome: reference,
        });
      }
    }
  });
});

/** The `when` of every rule of the gate and history benches' 200-rule policy. */
function benchConditions(): string[] {
  return benchRules().map((line) => /when: '([^']+)'/.exec(line)?.[1] ?? 'true');
}
