import { describe, expect, it } from 'vitest';
import { REJECT_ERROR_CODE, REJECT_STATUS, type RejectReason } from '../source.js';
import { createSource, SOURCE_KINDS, SourceConfigError, sourceConfigSchema } from './index.js';

describe('the source registry', () => {
  it('names every kind the issue lists', () => {
    expect(Object.keys(SOURCE_KINDS).sort()).toEqual(
      ['a2a-push', 'feishu', 'github', 'gitlab', 'hmac', 'slack', 'standard-webhooks', 'telegram'].sort(),
    );
    for (const [name, kind] of Object.entries(SOURCE_KINDS)) expect(kind.type).toBe(name);
  });

  it('parses the contract example config and builds working sources from it', () => {
    const sources = {
      github: { type: 'github', secret_env: 'GITHUB_WEBHOOK_SECRET' },
      partner: { type: 'standard-webhooks', secret_env: 'PARTNER_WHSEC' },
    };
    const env: Record<string, string> = {
      GITHUB_WEBHOOK_SECRET: 'gh',
      PARTNER_WHSEC: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    };
    for (const [name, raw] of Object.entries(sources)) {
      const config = sourceConfigSchema.parse(raw);
      const source = createSource(config, (n) => env[n]);
      expect(source.type, name).toBe(raw.type);
    }
  });

  it('rejects an unknown type and unknown keys', () => {
    expect(sourceConfigSchema.safeParse({ type: 'bitbucket', secret: 'x' }).success).toBe(false);
    expect(sourceConfigSchema.safeParse({ type: 'slack', secret: 'x', secert_env: 'Y' }).success).toBe(false);
  });

  it('never echoes a literal secret in a config error', () => {
    const result = sourceConfigSchema.safeParse({ type: 'telegram', secret: 'bad secret value' });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).not.toContain('bad secret value');
  });

  it('validates the config again when a kind is created from the registry', () => {
    expect(() => SOURCE_KINDS.github.create({ type: 'github' }, () => undefined)).toThrow();
    expect(() => SOURCE_KINDS.gitlab.create({ type: 'gitlab', secret_env: 'NOPE' }, () => undefined)).toThrow(
      SourceConfigError,
    );
  });

  it('answers 401 to every signature or timestamp problem and 400 to an unreadable body', () => {
    const reasons = Object.keys(REJECT_STATUS) as RejectReason[];
    for (const reason of reasons) {
      // An unreadable body: not JSON (`malformed`), or JSON nested past 64 (`too_deep`, issue #22).
      const unreadable = { malformed: 'bad_request', too_deep: 'json_too_deep' } as Record<string, string>;
      expect(REJECT_STATUS[reason]).toBe(reason in unreadable ? 400 : 401);
      expect(REJECT_ERROR_CODE[reason]).toBe(unreadable[reason] ?? 'bad_signature');
    }
  });
});
