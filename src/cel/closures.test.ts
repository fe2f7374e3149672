import { describe, expect, it } from 'vitest';
import { celClosure, closureFunctions, UNSURE, withClosure } from './closures.js';
import { celEnvironment, celMessage } from './environment.js';

const functions = {
  'twice(string): string': (s: string) => s + s,
  'kindOf(map): string': () => 'map',
  'kindOf(list): string': () => 'list',
  'when(google.protobuf.Timestamp): bool': () => true,
};
const env = celEnvironment({
  variables: { s: 'string', m: 'map', d: 'dyn' },
  mixedLiterals: true,
  functions: functions as never,
});
const table = closureFunctions(functions as never);

function program(expression: string) {
  const c = env.compile<(ctx: Record<string, unknown>) => unknown>(expression, 'dyn');
  if (!c.ok) throw new Error(c.message);
  return c.program;
}
const closureOf = (expression: string) => celClosure((program(expression) as { ast?: unknown }).ast, table);

describe('celClosure', () => {
  it('answers what it models and is unsure of the rest', () => {
    const f = closureOf('m.a == "x" && s.startsWith("a")')!;
    expect(f({ s: 'ab', m: { a: 'x' } })).toBe(true);
    expect(f({ s: 'ab', m: { a: 'y' } })).toBe(false);
    // a missing key is cel-js's error to report, not the closure's guess
    expect(f({ s: 'ab', m: {} })).toBe(UNSURE);
  });

  it('leaves an unsure step to cel-js, whose error and message stand', () => {
    const p = program('m.a == "x"');
    const both = withClosure(p, table);
    const error = (run: () => unknown) => {
      try {
        run();
      } catch (err) {
        return celMessage(err);
      }
      return undefined;
    };
    expect(error(() => both({ s: '', m: {} }))).toBe(error(() => p({ s: '', m: {} })));
    expect(error(() => both({ s: '', m: {} }))).toContain('No such key');
  });

  it('calls a helper by the overload its arguments fit, as cel-js picks it', () => {
    expect(closureOf('twice(s) == "aa"')!({ s: 'a', m: {} })).toBe(true);
    expect(closureOf('kindOf(d)')!({ s: '', m: {}, d: ['x'] })).toBe('list');
    expect(closureOf('kindOf(d)')!({ s: '', m: {}, d: { a: 'x' } })).toBe('map');
    expect(closureOf('kindOf(d)')!({ s: '', m: {}, d: 'x' })).toBe(UNSURE);
  });

  it('gives no closure for what it does not compile: a helper of another type, map literals, indexing', () => {
    expect(table.when).toBeUndefined();
    expect(closureOf('{"a": s}.a == "x"')).toBeUndefined();
    expect(closureOf('[s][0] == "x"')).toBeUndefined();
  });

  it('turns no text of the expression into code', () => {
    const f = closureOf('s == "\\"); throw new Error(\\"x"')!;
    expect(f({ s: '"); throw new Error("x', m: {} })).toBe(true);
  });
});
