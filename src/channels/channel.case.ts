import { describe, expect, it } from 'vitest';
import type { ChannelKind, FormatContext, SendDeps } from './channel.js';
import type { Message } from '../notify/port.js';
import { ELLIPSIS, measure } from '../text/index.js';

/**
 * The suite every channel kind passes (hono's `*.case` pattern). Each channel's test calls
 * `channelCase(fixture)`; the fixture says how to read its rendered request, and gives the
 * provider's answers for success, a business error, a rate limit and a server error.
 */
export interface ChannelCase<C, R, P> {
  kind: ChannelKind<C, R, P>;
  /** A valid `channels.<name>` entry as it appears in YAML. */
  rawConfig: Record<string, unknown>;
  /** Same, with a mention target, for channels that can mention the owner. */
  rawMentionConfig?: Record<string, unknown>;
  secrets: Record<string, string>;
  /** The main text as a person would read it (decoded where the wire encodes it). */
  text(r: R): string;
  /** Everything that goes on the wire (decoded where the wire encodes it), for scanning. */
  wire(r: R): string;
  /** Approve/reject targets (URLs or callback data), when the kind has buttons. */
  buttons?(r: R): { approve: string; reject: string } | undefined;
  /** Whether the rendered request mentions the owner. */
  mentions?(r: R): boolean;
  responses: {
    ok: P;
    business: P;
    businessExpect: 'dead' | 'retry';
    rateLimited: P;
    rateLimitedRetryAfterMs?: number;
    serverError: P;
  };
}

export const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

export const ACTIONS = {
  approveUrl: 'https://sb.example/v1/approvals/apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V/approve?t=one-time-approve',
  rejectUrl: 'https://sb.example/v1/approvals/apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V/reject?t=one-time-reject',
  pageUrl: 'https://sb.example/console/approvals/apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
  approvalId: 'apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
} as const;

/** A signed reply page link (docs/replies.md); the token's shape does not matter to a channel. */
export const REPLY_URL =
  'https://sb.example/r/eyJ0IjoidHNrXzAxSkRaM1I1VzhYSzJNNE42UDhRMFMyVDRWIn0.c2lnbmF0dXJlLW9mLXRoZS1yZXBseS1saW5rLTEyMzQ1';

export function sampleMessage(over: Partial<Message> = {}): Message {
  return {
    kind: 'progress',
    stage: 'failed',
    severity: 'warn',
    title: 'Deploy web',
    summary: 'Migration 42 failed on the staging database',
    detail: 'psql: relation "users" already exists',
    artifact: 'https://ci.example/runs/981',
    task: { id: 'tsk_01JDZ3R5W8XK2M4N6P8Q0S2T4V', name: 'deploy' },
    agent: 'claude-code',
    locale: 'en',
    eventId: 'evt_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
    ...over,
  };
}

export function approvalMessage(over: Partial<Message> = {}): Message {
  return sampleMessage({
    kind: 'approval',
    stage: 'awaiting_approval',
    title: 'Run the production migration',
    summary: 'The agent wants to run migration 42 on production',
    actions: { ...ACTIONS },
    ...over,
  });
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const inner of Object.values(v)) deepFreeze(inner);
    Object.freeze(v);
  }
  return v;
}

const MASS = [
  '@all',
  '@everyone',
  '@here',
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<at user_id="all">',
  '@所有人',
];

export function channelCase<C, R, P>(fx: ChannelCase<C, R, P>): void {
  const { kind } = fx;
  const config = kind.configSchema.parse(fx.rawConfig);
  const ctx: FormatContext = { now: NOW, secret: (env) => fx.secrets[env] };
  const render = (msg: Message, c: C = config) => kind.format(deepFreeze(msg), c, ctx);

  describe(`${kind.type}: the shared channel suite`, () => {
    it('accepts its example config and rejects an unknown key', () => {
      expect(kind.configSchema.safeParse(fx.rawConfig).success).toBe(true);
      expect(kind.configSchema.safeParse({ ...fx.rawConfig, surprise: 1 }).success).toBe(false);
    });

    it('formats purely: the same input gives the same request and the message is not changed', () => {
      const a = render(approvalMessage());
      const b = render(approvalMessage());
      expect(a).toEqual(b);
    });

    it('maps success, a business error, a rate limit and a server error onto ok, dead-or-retry, retry, retry', () => {
      expect(kind.parseResult(fx.responses.ok).kind).toBe('ok');
      expect(kind.parseResult(fx.responses.business).kind).toBe(fx.responses.businessExpect);
      const limited = kind.parseResult(fx.responses.rateLimited);
      expect(limited.kind).toBe('retry');
      if (fx.responses.rateLimitedRetryAfterMs !== undefined && limited.kind === 'retry') {
        expect(limited.retryAfterMs).toBe(fx.responses.rateLimitedRetryAfterMs);
      }
      expect(kind.parseResult(fx.responses.serverError).kind).toBe('retry');
    });

    it('strips mass mentions from everything it sends', () => {
      const noisy = MASS.join(' ');
      const r = render(
        sampleMessage({
          title: `${noisy} title`,
          summary: `hey @everyone <!channel>`,
          detail: noisy,
          mention: true,
        }),
      );
      const wire = fx.wire(r);
      for (const m of MASS) expect(wire).not.toContain(m);
      expect(wire).toContain('title');
    });

    it('caps the main text with an ellipsis and keeps the summary and the approval targets', () => {
      const r = render(approvalMessage({ detail: 'x'.repeat(kind.maxLength * 2 + 10) }));
      const text = fx.text(r);
      expect(measure(text, kind.lengthUnit)).toBeLessThanOrEqual(kind.maxLength);
      expect(text).toContain(ELLIPSIS);
      expect(text).toContain('migration 42');
      if (kind.buttons && fx.buttons) expect(fx.buttons(r)).toBeDefined();
      else expect(fx.wire(r)).toContain(ACTIONS.pageUrl);
    });

    it(kind.buttons ? 'carries approve and reject buttons' : 'carries the approval page link', () => {
      const r = render(approvalMessage());
      if (kind.buttons) {
        const b = fx.buttons?.(r);
        expect(b).toBeDefined();
        expect(b?.approve === ACTIONS.approveUrl || b?.approve.includes(ACTIONS.approvalId)).toBe(true);
        expect(b?.reject === ACTIONS.rejectUrl || b?.reject.includes(ACTIONS.approvalId)).toBe(true);
      } else {
        expect(fx.wire(r)).toContain(ACTIONS.pageUrl);
      }
    });

    it('carries the reply link, also when a long detail is cut', () => {
      const done = sampleMessage({ stage: 'done', reply: { url: REPLY_URL } });
      expect(fx.wire(render(done))).toContain(REPLY_URL);
      const long = { ...done, detail: 'x'.repeat(kind.maxLength * 2 + 10) };
      expect(fx.wire(render(long))).toContain(REPLY_URL);
      expect(fx.wire(render(sampleMessage()))).not.toContain('/r/');
    });

    it('labels the message in English or Chinese', () => {
      expect(fx.wire(render(sampleMessage({ locale: 'en' })))).toContain('Failed');
      expect(fx.wire(render(sampleMessage({ locale: 'zh' })))).toContain('失败');
    });

    if (fx.mentions && fx.rawMentionConfig) {
      const mentions = fx.mentions;
      const withTarget = kind.configSchema.parse(fx.rawMentionConfig);
      it('mentions the owner only when the message asks for it', () => {
        expect(mentions(render(sampleMessage({ severity: 'critical', mention: true }), withTarget))).toBe(
          true,
        );
        expect(mentions(render(sampleMessage({ severity: 'critical', mention: false }), withTarget))).toBe(
          false,
        );
        expect(mentions(render(sampleMessage({ mention: true }), config))).toBe(false);
      });
    }

    it('turns a network failure into retry without leaking the URL', async () => {
      const failing = async (): Promise<never> => {
        const err = new Error('connect ECONNREFUSED https://secret-token@host/path');
        Object.assign(err, { code: 'ECONNREFUSED' });
        throw err;
      };
      const deps: SendDeps = {
        post: failing,
        smtp: failing,
        now: () => NOW,
        secret: (env) => fx.secrets[env],
      };
      const res = await kind.send(sampleMessage(), config, deps);
      expect(res).toEqual({ kind: 'retry', error: 'network error (ECONNREFUSED)' });
    });
  });
}
