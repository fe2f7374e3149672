import { describe, expect, it } from 'vitest';
import { checkLaunchTemplate, renderArgv, renderValue, trustedVars, untrustedHeader } from './template.js';

describe('renderArgv', () => {
  it('fills trusted placeholders in place, each into exactly one argv element', () => {
    const r = renderArgv(
      ['claude', '-p', 'review {{trusted.repo}}#{{ trusted.pr }}'],
      trustedVars({ repo: 'a/b', pr: '7' }),
    );
    expect(r).toEqual({ ok: true, argv: ['claude', '-p', 'review a/b#7'] });
  });

  it('keeps a hostile trusted value as one inert argument', () => {
    const r = renderArgv(['agent', '{{trusted.repo}}'], trustedVars({ repo: '$(rm -rf /); echo pwned' }));
    expect(r).toEqual({ ok: true, argv: ['agent', '$(rm -rf /); echo pwned'] });
  });

  it('refuses any placeholder that is not a trusted field', () => {
    const r = renderArgv(['agent', '{{untrusted.text}}'], trustedVars({ repo: 'a/b' }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain('unknown placeholder {{untrusted.text}}');
  });

  it('refuses a trusted field the request does not carry', () => {
    expect(renderArgv(['agent', '{{trusted.branch}}'], trustedVars({ repo: 'a/b' })).ok).toBe(false);
  });

  it('refuses a value with a NUL byte and an empty program', () => {
    expect(renderArgv(['a', '{{trusted.x}}'], trustedVars({ x: 'a\0b' })).ok).toBe(false);
    expect(renderArgv(['{{trusted.x}}'], trustedVars({ x: '' })).ok).toBe(false);
    expect(renderArgv([], {}).ok).toBe(false);
  });
});

describe('checkLaunchTemplate', () => {
  it('accepts only trusted placeholders', () => {
    expect(checkLaunchTemplate(['claude', '-p', '{{trusted.repo}}'])).toEqual([]);
    expect(checkLaunchTemplate(['claude', '{{session_id}}', '{{untrusted.text}}'])).toHaveLength(2);
  });
});

describe('renderValue', () => {
  it('fills placeholders in every string of a JSON value and leaves other values alone', () => {
    const r = renderValue({ a: ['{{x}}', 1, null], b: { c: 'say {{x}}' }, d: true }, { x: 'hi' });
    expect(r).toEqual({ ok: true, value: { a: ['hi', 1, null], b: { c: 'say hi' }, d: true } });
  });

  it('reports an unknown placeholder deep inside the value', () => {
    expect(renderValue({ a: [{ b: '{{nope}}' }] }, { x: 'hi' }).ok).toBe(false);
  });
});

describe('untrustedHeader', () => {
  it('is one line that names the source and says the text is data', () => {
    const h = untrustedHeader('vlt_1', 'sha256:ab');
    expect(h.endsWith('\n')).toBe(true);
    expect(h.split('\n')).toHaveLength(2);
    expect(h).toContain('UNTRUSTED');
    expect(h).toContain('vlt_1');
  });
});
