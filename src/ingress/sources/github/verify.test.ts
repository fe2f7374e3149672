import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { github, githubBinding } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

// The package is CommonJS JSON whose typings claim an ES default export; load it the way Node does.
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Array<{
  name: string;
  examples: unknown[];
}>;

const SECRETS = ['old-secret', 'new-secret'];
const source = github.create({ type: 'github', secret: SECRETS }, () => undefined);
const bytes = (s: string) => new TextEncoder().encode(s);

function request(body: string, signature: string, delivery = 'd-1', event = 'push'): InboundRequest {
  return {
    headers: { 'x-hub-signature-256': signature, 'x-github-delivery': delivery, 'x-github-event': event },
    body: bytes(body),
    now: Date.now(),
  };
}

runSourceCase('github', {
  source,
  secrets: SECRETS,
  signsBody: true,
  headers: { signature: 'x-hub-signature-256', id: 'x-github-delivery' },
  sign(now, { deliveryId, secretIndex = 0, foreignSecret }) {
    const body = JSON.stringify({ action: 'opened', number: 7, repository: { full_name: 'o/r' } });
    const key = foreignSecret ? 'someone-else' : (SECRETS[secretIndex] ?? '');
    const hex = createHmac('sha256', key).update(body).digest('hex');
    return { ...request(body, `sha256=${hex}`, deliveryId), now };
  },
});

describe('github published vectors', () => {
  it('accepts the GitHub docs vector (1a)', () => {
    const s = github.create({ type: 'github', secret: "It's a Secret to Everybody" }, () => undefined);
    const sig = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    // The docs body is not JSON: the signature verifies, then the body is refused as unreadable.
    expect(s.verify(request('Hello, World!', sig))).toMatchObject({ kind: 'rejected', reason: 'malformed' });
    expect(s.verify(request('Hello, World?', sig))).toMatchObject({
      kind: 'rejected',
      reason: 'bad_signature',
    });
  });

  it('accepts the octokit SDK vector (1b)', () => {
    const s = github.create({ type: 'github', secret: 'mysecret' }, () => undefined);
    const sig = 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';
    expect(s.verify(request('{"foo":"bar"}', sig))).toMatchObject({
      kind: 'ok',
      deliveryId: 'd-1',
      eventName: 'push',
      payload: { foo: 'bar' },
    });
  });

  it('accepts an upper-case hex signature', () => {
    const s = github.create({ type: 'github', secret: 'mysecret' }, () => undefined);
    const sig = 'sha256=4864D2759938A15468B5DF9ADE20BF161DA9B4F737EA61794142F3484236BDA3';
    expect(s.verify(request('{"foo":"bar"}', sig)).kind).toBe('ok');
  });
});

describe('github against real payloads signed by @octokit/webhooks-methods', () => {
  const payloads = examples.flatMap((def) =>
    def.examples.slice(0, 1).map((example) => ({ event: def.name, body: JSON.stringify(example, null, 2) })),
  );

  it('has real example payloads to check', () => {
    expect(payloads.length).toBeGreaterThan(40);
  });

  it('accepts every example and rejects each with one byte changed', async () => {
    const s = github.create({ type: 'github', secret: 'octokit-secret' }, () => undefined);
    for (const { event, body } of payloads) {
      const signature = await sign('octokit-secret', body);
      const ok = s.verify(request(body, signature, `gh-${event}`, event));
      expect(ok, event).toMatchObject({ kind: 'ok', deliveryId: `gh-${event}`, eventName: event });
      const changed = bytes(body);
      const at = Math.floor(changed.length / 3);
      changed[at] = (changed[at] ?? 0) ^ 0x20;
      expect(s.verify({ ...request('', signature), body: changed }), event).toMatchObject({
        reason: 'bad_signature',
      });
    }
  });
});

describe('github specifics', () => {
  const s = github.create({ type: 'github', secret: 'mysecret' }, () => undefined);

  it('does not accept the legacy SHA-1 header alone, and says so', () => {
    const req: InboundRequest = {
      headers: { 'x-hub-signature': 'sha1=abc', 'x-github-delivery': 'd' },
      body: bytes('{}'),
      now: 0,
    };
    const result = s.verify(req);
    expect(result).toMatchObject({ kind: 'rejected', reason: 'missing_signature' });
    expect(result.kind === 'rejected' && result.message).toContain('SHA-1');
  });

  it('rejects a signature without the sha256= prefix', () => {
    const hex = '4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';
    expect(s.verify(request('{"foo":"bar"}', hex))).toMatchObject({ reason: 'bad_signature' });
  });

  it('reads a form-encoded delivery (payload=<json>)', async () => {
    const body = `payload=${encodeURIComponent('{"zen":"Keep it logically awesome."}')}`;
    const result = s.verify(request(body, await sign('mysecret', body), 'd-2', 'ping'));
    expect(result).toMatchObject({
      kind: 'ok',
      eventName: 'ping',
      payload: { zen: 'Keep it logically awesome.' },
    });
  });

  it('binds installation, repository and organization when the payload carries them', () => {
    const payload = {
      installation: { id: 42 },
      repository: { full_name: 'acme/api' },
      organization: { login: 'acme' },
    };
    expect(githubBinding(payload)).toEqual({
      installation_id: '42',
      repository: 'acme/api',
      organization: 'acme',
    });
    expect(githubBinding({ zen: 'x' })).toEqual({});
  });

  it('refuses to start when its secret variable is unset, naming the variable only', () => {
    expect(() => github.create({ type: 'github', secret_env: 'GH_SECRET' }, () => undefined)).toThrow(
      /GH_SECRET is not set/,
    );
  });

  it('has a strict config schema that wants exactly one of secret_env and secret', () => {
    expect(github.configSchema.safeParse({ type: 'github', secret_env: 'GH' }).success).toBe(true);
    expect(github.configSchema.safeParse({ type: 'github' }).success).toBe(false);
    expect(github.configSchema.safeParse({ type: 'github', secret_env: 'A', secret: 'b' }).success).toBe(
      false,
    );
    expect(github.configSchema.safeParse({ type: 'github', secret_env: 'A', extra: 1 }).success).toBe(false);
  });
});
