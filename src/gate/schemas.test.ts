import { describe, expect, it } from 'vitest';
import { buildToolSchemas, KNOWN_TOOL_SCHEMAS } from './schemas.js';

describe('tool schemas', () => {
  it('compiles every known schema on its first check, and checks input against it', () => {
    const built = buildToolSchemas({});
    if (!built.ok) throw new Error(built.errors.join('; '));
    for (const tool of Object.keys(KNOWN_TOOL_SCHEMAS)) {
      expect(built.check(tool, 'not an object').kind).toBe('invalid');
    }
    expect(built.check('Bash', { command: 'ls' })).toEqual({ kind: 'valid' });
    expect(built.check('NoSuchTool', {})).toEqual({ kind: 'unknown' });
  });

  it('lets a configured schema win over the known one, and refuses one that does not compile', () => {
    const built = buildToolSchemas({ Bash: { type: 'object', required: ['script'] } });
    if (!built.ok) throw new Error(built.errors.join('; '));
    expect(built.check('Bash', { command: 'ls' }).kind).toBe('invalid');
    expect(built.check('Bash', { script: 'ls' })).toEqual({ kind: 'valid' });
    const broken = buildToolSchemas({ Mine: { type: 'no-such-type' } });
    expect(broken.ok).toBe(false);
  });
});
