import { Environment } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { celEnvironment, celMessage } from './environment.js';
import { compiledPattern, keepPatterns } from './patterns.js';

/** The same variables through Switchboard's environment (kept patterns) and through bare cel-js. */
const variables = { s: 'dyn', re: 'dyn', name: 'string' } as const;
const ours = celEnvironment({ variables });
const bare = new Environment()
  .registerVariable('s', 'dyn')
  .registerVariable('re', 'dyn')
  .registerVariable('name', 'string');

type Outcome = { value: unknown } | { error: string };
function run(program: (c: Record<string, unknown>) => unknown, c: Record<string, unknown>): Outcome {
  try {
    return { value: program(c) };
  } catch (err) {
    return { error: celMessage(err) };
  }
}

describe('matches with kept patterns', () => {
  const expressions = [
    's.matches("^git .*--force$")',
    's.matches(re)',
    'name.matches("^[a-z]+$")',
    '["a", "bb"].exists(x, x.matches(re))',
  ];
  const contexts: Record<string, unknown>[] = [
    { s: 'git push --force', re: '^git', name: 'abc' },
    { s: 'ls', re: 'l+s$', name: 'ABC' },
    { s: 'x', re: '(', name: 'a' },
    { s: 'x', re: '[', name: 'b' },
    { s: 5n, re: 'x', name: 'c' },
    { s: 'x', re: 3n, name: 'd' },
    { s: null, re: null, name: 'e' },
  ];

  it('gives what cel-js gives, errors included, for valid, invalid and non-string patterns', () => {
    for (const expression of expressions) {
      const compiled = ours.compile<(c: Record<string, unknown>) => unknown>(expression, 'dyn');
      if (!compiled.ok) throw new Error(compiled.message);
      const reference = bare.parse(expression);
      for (const c of contexts) {
        // twice: the second call is answered by the kept pattern
        expect(run(compiled.program, c)).toEqual(run(reference as never, c));
        expect(run(compiled.program, c)).toEqual(run(reference as never, c));
      }
    }
  });

  it('finds every matches call of the checked tree, inside macros too (fails when cel-js renames its nodes)', () => {
    for (const [expression, calls] of [
      ['s.matches("a") || s.matches("b")', 2],
      ['["a"].exists(x, x.matches(re))', 1],
      ['s == "x"', 0],
    ] as const) {
      const parsed = bare.parse(expression);
      parsed.check();
      expect(keepPatterns(parsed.ast)).toBe(calls);
    }
  });

  it('compiles a pattern once and keeps no invalid one', () => {
    expect(compiledPattern('^a+$')).toBe(compiledPattern('^a+$'));
    expect(() => compiledPattern('(')).toThrow(SyntaxError);
    expect(() => compiledPattern('(')).toThrow(SyntaxError);
  });
});
