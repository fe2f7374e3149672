import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from './catalogue.js';

describe('error catalogue', () => {
  it('matches docs/errors.md code for code and status for status', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const documented = new Map(
      [...doc.matchAll(/^\| `(\w+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]),
    );
    const code = new Map(Object.entries(ERRORS).map(([k, v]) => [k, v.status]));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(code));
  });
});
