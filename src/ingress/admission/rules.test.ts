import { describe, expect, it } from 'vitest';
import { compileFilter, compileKey } from './cel.js';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_HOPS, loopSchema, parseDuration, triggersSchema } from './config.js';
import { botActor, depthMarker, markerDepth } from './loop.js';
import { ConfigError } from '../../config/load.js';
import { parseConfig } from '../../server/config.js';

/** The problems the app's config schema finds in `raw` (every module's sections and checks). */
function checkIngressConfig(raw: Record<string, unknown>): { path: string; message: string }[] {
  try {
    parseConfig(raw, 'test');
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}
import { compileTriggers, TriggerConfigError } from './triggers.js';

const ctx = {
  event: { name: 'pull_request', lineage: { hop_count: 0, depth: 0 } },
  payload: { action: 'synchronize', number: 7, repository: { full_name: 'o/r' }, labels: [{ name: 'bot' }] },
  source: { name: 'github', type: 'github' },
};

describe('trigger CEL', () => {
  it('filters on event, payload and source, with JSON integers read as CEL ints', () => {
    const f = compileFilter('source.name == "github" && event.name == "pull_request" && payload.number > 5');
    expect(f.ok && f.run(ctx)).toEqual({ ok: true, value: true });
  });

  it('builds a coalescing key from payload fields', () => {
    const k = compileKey('payload.repository.full_name + "#" + string(payload.number)');
    expect(k.ok && k.run(ctx)).toEqual({ ok: true, value: 'o/r#7' });
  });

  it('reports a missing field at run time as an error, not as false', () => {
    const f = compileFilter('payload.pull_request.draft == false');
    expect(f.ok && f.run(ctx)).toMatchObject({ ok: false });
  });

  it('refuses at compile time an unknown variable and a non-bool filter', () => {
    expect(compileFilter('paylod.x == 1').ok).toBe(false);
    expect(compileFilter('"yes"').ok).toBe(false);
  });
});

describe('trigger config', () => {
  const base = { id: 't', source: 'github', action: { type: 'notify' } };

  it('reads windows as durations', () => {
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('10')).toBeUndefined();
  });

  it('refuses unknown fields, duplicate ids and bad windows', () => {
    expect(triggersSchema.safeParse([{ ...base, extra: 1 }]).success).toBe(false);
    expect(triggersSchema.safeParse([base, base]).success).toBe(false);
    expect(triggersSchema.safeParse([{ ...base, coalesce: { key: 'x', window: '3 days' } }]).success).toBe(
      false,
    );
    expect(triggersSchema.safeParse([{ ...base, action: { type: 'command', command: [] } }]).success).toBe(
      false,
    );
  });

  it('stops start-up on a trigger whose CEL does not compile or whose source is not configured', () => {
    const sources = new Set(['github']);
    expect(() => compileTriggers(triggersSchema.parse([{ ...base, when: 'payload. ==' }]), sources)).toThrow(
      TriggerConfigError,
    );
    expect(() => compileTriggers(triggersSchema.parse([{ ...base, source: 'gitlab' }]), sources)).toThrow(
      /not configured/,
    );
  });

  it('defaults the loop limit to the named constant', () => {
    expect(loopSchema.parse({})).toEqual({
      bot_logins: [],
      max_depth: DEFAULT_MAX_DEPTH,
      max_hops: DEFAULT_MAX_HOPS,
    });
  });
});

describe('loop facts', () => {
  it('reads the highest depth marker in comment-like fields', () => {
    expect(markerDepth({ comment: { body: `a ${depthMarker(1)} b ${depthMarker(2)}` } })).toBe(2);
    expect(markerDepth({ comment: { body: 'no marker' } })).toBe(0);
    expect(markerDepth({ title: depthMarker(9) })).toBe(0);
  });

  it('matches bot logins case-insensitively and with the [bot] suffix', () => {
    expect(botActor({ sender: { login: 'Switchboard[bot]' } }, ['switchboard'])).toBe('Switchboard[bot]');
    expect(botActor({ sender: { login: 'human' } }, ['switchboard'])).toBeUndefined();
  });
});

describe('checkIngressConfig', () => {
  it('names each problem by its config path', () => {
    const problems = checkIngressConfig({
      sources: {
        github: { type: 'github', secret: 's', tenant: 'acme' },
        bad: { type: 'github', sekret: 's' },
      },
      triggers: [{ id: 't', source: 'github', when: 'payload. ==', action: { type: 'notify' } }],
      loop: { max_depth: 0 },
    });
    const paths = problems.map((p) => p.path);
    expect(paths.some((p) => p.startsWith('sources.bad'))).toBe(true);
    expect(paths).toContain('loop.max_depth');
    expect(paths).toContain('triggers.0');
  });

  it('accepts a good config', () => {
    expect(
      checkIngressConfig({
        sources: { github: { type: 'github', secret_env: 'GH' } },
        triggers: [{ id: 't', source: 'github', when: 'event.name == "push"', action: { type: 'notify' } }],
      }),
    ).toEqual([]);
  });
});
