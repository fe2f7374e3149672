import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { gitlab, gitlabBinding } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

const bytes = (s: string) => new TextEncoder().encode(s);
const TOKENS = ['old-gitlab-token', 'new-gitlab-token'];
const source = gitlab.create({ type: 'gitlab', secret: TOKENS }, () => undefined);

const push = {
  object_kind: 'push',
  ref: 'refs/heads/main',
  project_id: 15,
  project: { id: 15, path_with_namespace: 'group/project' },
};

function request(headers: Record<string, string>, body: unknown = push): InboundRequest {
  return { headers, body: bytes(JSON.stringify(body)), now: 0 };
}

runSourceCase('gitlab', {
  source,
  secrets: TOKENS,
  signsBody: false,
  headers: { signature: 'x-gitlab-token' },
  sign(now, { deliveryId, secretIndex = 0, foreignSecret }) {
    const token = foreignSecret ? 'not-the-token' : (TOKENS[secretIndex] ?? '');
    return {
      ...request({ 'x-gitlab-token': token, 'x-gitlab-event': 'Push Hook', 'idempotency-key': deliveryId }),
      now,
    };
  },
});

describe('gitlab specifics', () => {
  const token = TOKENS[0] ?? '';

  it('prefers Idempotency-Key, then X-Gitlab-Event-UUID, then a digest of the body as the delivery id', () => {
    const both = request({ 'x-gitlab-token': token, 'idempotency-key': 'k-1', 'x-gitlab-event-uuid': 'u-1' });
    expect(source.verify(both)).toMatchObject({ deliveryId: 'k-1' });
    expect(source.verify(request({ 'x-gitlab-token': token, 'x-gitlab-event-uuid': 'u-1' }))).toMatchObject({
      deliveryId: 'u-1',
    });
    const a = source.verify(request({ 'x-gitlab-token': token }));
    const b = source.verify(request({ 'x-gitlab-token': token }));
    expect(a).toMatchObject({ kind: 'ok', deliveryId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(a.kind === 'ok' && b.kind === 'ok' && a.deliveryId === b.deliveryId).toBe(true);
  });

  it('names the event from X-Gitlab-Event, else from object_kind', () => {
    expect(source.verify(request({ 'x-gitlab-token': token, 'x-gitlab-event': 'Push Hook' }))).toMatchObject({
      eventName: 'Push Hook',
    });
    expect(source.verify(request({ 'x-gitlab-token': token }))).toMatchObject({ eventName: 'push' });
  });

  it('binds the project', () => {
    expect(gitlabBinding(push)).toEqual({ project: 'group/project', project_id: '15' });
  });

  it('resolves its token from the environment', () => {
    const s = gitlab.create({ type: 'gitlab', secret_env: 'GL_TOKEN' }, (n) =>
      n === 'GL_TOKEN' ? 'tok' : undefined,
    );
    expect(s.verify(request({ 'x-gitlab-token': 'tok' })).kind).toBe('ok');
  });
});
