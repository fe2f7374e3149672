import { describe, expect, it } from 'vitest';
import { compileCel } from './cel.js';

describe('compileCel', () => {
  it('accepts a map expression for input_expr and refuses a string', () => {
    expect(compileCel('{"command": input.command}', 'map').ok).toBe(true);
    expect(compileCel('"x"', 'map')).toMatchObject({ ok: false, message: expect.stringMatching(/string/) });
  });
});
