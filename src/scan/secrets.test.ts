import { describe, expect, it } from 'vitest';
import { maskSecrets, scanSecrets } from './secrets.js';
import { j, SECRET_SAMPLES as SECRETS } from './testing.js';

describe('secret scanning', () => {
  it.each(SECRETS)('finds a %s', (kind, secret) => {
    const found = scanSecrets(`deploy log: ${secret} end`);
    expect(found.map((f) => f.kind)).toContain(kind);
  });

  it('keeps the words around a password assignment and masks only the value', () => {
    expect(maskSecrets('login password=hunter2xyz ok')).toBe(
      'login password=[redacted:password_assignment] ok',
    );
  });

  it('does not take ordinary prose, ids or a low-entropy bearer word for a secret', () => {
    for (const text of [
      'tests pass: 124 of 124, build 8f3a2c1',
      'task tsk_01J9Z3ABCDEFGHJKMNPQRSTVWX is done',
      'the key is in the vault, see the runbook',
      'Bearer aaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      'skip-ant-colony and sk-short',
    ]) {
      expect(scanSecrets(text)).toEqual([]);
    }
  });

  it('claims an Anthropic key as Anthropic, not as an OpenAI key', () => {
    expect(scanSecrets(j('sk-ant-', 'api03-', 'q'.repeat(30))).map((f) => f.kind)).toEqual(['anthropic_key']);
  });
});
