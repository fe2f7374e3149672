import { describe, expect, it } from 'vitest';
import { planDigest } from './plan.js';

describe('planDigest', () => {
  it('is sha256 over canonical JSON, blind to key order', () => {
    const a = planDigest({ tool: 'Bash', input: { command: 'ls', timeout: 5 } });
    const b = planDigest({ input: { timeout: 5, command: 'ls' }, tool: 'Bash' });
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a).toBe(b);
  });

  it('treats a missing action or resource as null', () => {
    expect(planDigest({ tool: 'X', input: {} })).toBe(
      planDigest({ tool: 'X', action: null, resource: null, input: {} }),
    );
  });

  it('changes with any part of the plan', () => {
    const base = { tool: 'Bash', action: 'a', resource: 'r', input: { command: 'ls' } };
    const digests = new Set([
      planDigest(base),
      planDigest({ ...base, tool: 'Sh' }),
      planDigest({ ...base, action: 'b' }),
      planDigest({ ...base, resource: 's' }),
      planDigest({ ...base, input: { command: 'ls ' } }),
    ]);
    expect(digests.size).toBe(5);
  });
});
