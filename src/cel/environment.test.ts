import { describe, expect, it } from 'vitest';
import { celEnvironment } from './environment.js';

const strict = celEnvironment({ variables: { name: 'string', body: 'map' } });
const mixed = celEnvironment({ variables: { name: 'string', body: 'map' }, mixedLiterals: true });

describe('celEnvironment', () => {
  it('compiles an expression over its declared variables into a program of them', () => {
    const c = strict.compile<(ctx: { name: string }) => unknown>('name == "x"', 'bool');
    expect(c.ok && c.program({ name: 'x' })).toBe(true);
  });

  it('refuses an undeclared variable at compile time, with the first line of the error only', () => {
    const c = strict.compile('nam == "x"', 'bool');
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.message).not.toContain('\n');
  });

  it('names the type an expression gives when it is not the one expected', () => {
    expect(strict.compile('name', 'bool')).toEqual({
      ok: false,
      message: 'the expression gives string, not bool',
    });
    expect(strict.compile('name', 'string').ok).toBe(true);
    expect(strict.compile('body.anything', 'bool').ok).toBe(true);
  });

  it('takes any map type where a map is expected', () => {
    expect(mixed.compile('{"a": name}', 'map').ok).toBe(true);
  });

  it('refuses mixed list literals unless the environment allows them', () => {
    expect(strict.compile('[name, 1].size() > 0', 'bool').ok).toBe(false);
    expect(mixed.compile('[name, 1].size() > 0', 'bool').ok).toBe(true);
  });

  it('turns a syntax error into a message instead of throwing', () => {
    expect(strict.compile('name ==', 'bool')).toMatchObject({ ok: false, message: expect.any(String) });
  });
});

describe('type errors', () => {
  const env = celEnvironment({
    variables: { event: 'map', tool: 'string' },
    hints: { event: 'compare its name: event.name == "pull_request"' },
  });

  it('name the variable, its type and the fix', () => {
    const c = env.compile('event == "pull_request"', 'bool');
    expect(c).toEqual({
      ok: false,
      message:
        'no such overload: map<dyn, dyn> == string (`event` is a map: compare its name: event.name == "pull_request")',
    });
  });

  it('name a variable without a hint and say how to use it', () => {
    const c = env.compile('tool > 1', 'bool');
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.message).toContain('`tool` is a string');
  });
});
