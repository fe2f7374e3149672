import { describe, expect, it } from 'vitest';
import { notifyConfigProblems } from './config.js';
import type { Draft } from './message.js';
import { applyTemplate } from './templated.js';
import { compileTemplates, type TemplatesConfig, templateEngine, templateProblems } from './templates.js';

const GATE = { secrets: 'block' as const, allowed_link_domains: ['example.com'], detail_max_chars: 2000 };
const DRAFT: Draft = {
  kind: 'progress',
  stage: 'done',
  severity: 'info',
  title: 'Done · release',
  summary: 'PR merged',
  detail: 'all green',
  artifact: 'https://github.example.com/acme/app/pull/42',
  task: { id: 'tsk_1', name: 'release' },
  agent: 'bot',
  locale: 'en',
};

async function apply(
  config: TemplatesConfig,
  channel: { name: string; type: string },
  draft: Draft = DRAFT,
  gate: typeof GATE | (Omit<typeof GATE, 'secrets'> & { secrets: 'mask' }) = GATE,
) {
  const engine = templateEngine();
  const compiled = compileTemplates(engine, config);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return applyTemplate(engine, compiled.templates, channel, draft, gate);
}

describe('user templates', () => {
  it('applies the template of the channel type over the structured fields', async () => {
    const r = await apply(
      { ntfy: { summary: '[{{ stage | upcase }}] {{ summary }} ({{ task.name }})', title: '{{ agent }}' } },
      { name: 'phone', type: 'ntfy' },
    );
    expect(r).toMatchObject({ kind: 'templated', key: 'ntfy' });
    if (r.kind !== 'templated') return;
    expect(r.draft.summary).toBe('[DONE] PR merged (release)');
    expect(r.draft.title).toBe('bot');
    expect(r.draft.detail).toBe('all green');
    expect(r.draft.artifact).toBe(DRAFT.artifact);
  });

  it('prefers the template of the channel name over the one of its type', async () => {
    const config = { ntfy: { summary: 'by type' }, phone: { summary: 'by name' } };
    const named = await apply(config, { name: 'phone', type: 'ntfy' });
    const typed = await apply(config, { name: 'pager', type: 'ntfy' });
    const none = await apply(config, { name: 'team', type: 'slack' });
    expect(named).toMatchObject({ kind: 'templated', key: 'phone', draft: { summary: 'by name' } });
    expect(typed).toMatchObject({ kind: 'templated', key: 'ntfy', draft: { summary: 'by type' } });
    expect(none).toEqual({ kind: 'builtin', draft: DRAFT });
  });

  it.each([
    ["{% include 'secrets.liquid' %}"],
    ["{% render '/etc/passwd' %}"],
    ["{% layout 'base' %}x"],
    ['{% block x %}y{% endblock %}'],
    ['{{ summary | no_such_filter }}'],
    ['{% if %}'],
  ])('refuses %s as a config error at its key path', (source) => {
    expect(templateProblems({ templates: { ntfy: { detail: source } } })).toEqual([
      { path: 'notify.templates.ntfy.detail', message: expect.any(String) },
    ]);
  });

  it('reports template problems among the notify config problems, and none for good templates', () => {
    expect(templateProblems({ templates: { slack: { summary: '{{ summary }}' } } })).toEqual([]);
    expect(templateProblems({})).toEqual([]);
    const problems = notifyConfigProblems({
      routes: [],
      notify: { templates: { phone: { title: '{% include "x" %}', colour: 'red' } } },
    });
    expect(problems.map((p) => p.path)).toContain('notify.templates.phone');
    const parseOnly = notifyConfigProblems({
      routes: [],
      notify: { templates: { phone: { title: '{% include "x" %}' } } },
    });
    expect(parseOnly).toEqual([{ path: 'notify.templates.phone.title', message: expect.any(String) }]);
  });

  it('blocks a secret that a template variable brings in, or masks it when secrets are masked', async () => {
    const leaky: Draft = { ...DRAFT, task: { id: 'tsk_1', name: `ghp_${'a'.repeat(36)}` } };
    const blocked = await apply(
      { ntfy: { detail: 'task {{ task.name }}' } },
      { name: 'p', type: 'ntfy' },
      leaky,
    );
    expect(blocked).toMatchObject({ kind: 'blocked', key: 'ntfy' });
    const masked = await apply(
      { ntfy: { detail: 'task {{ task.name }}' } },
      { name: 'p', type: 'ntfy' },
      leaky,
      {
        ...GATE,
        secrets: 'mask',
      },
    );
    expect(masked.kind).toBe('templated');
    if (masked.kind !== 'templated') return;
    expect(masked.draft.detail).not.toContain('ghp_');
    expect(masked.draft.detail).toContain('[redacted:');
  });

  it('still defangs links, strips mass mentions and caps what a template writes', async () => {
    const r = await apply(
      {
        ntfy: {
          summary: '@everyone {{ summary }} {{ "x" | append: summary }}',
          detail: 'see https://evil.test/a',
        },
      },
      { name: 'p', type: 'ntfy' },
      { ...DRAFT, summary: 'y'.repeat(120) },
    );
    expect(r.kind).toBe('templated');
    if (r.kind !== 'templated') return;
    expect(r.draft.summary).not.toContain('@everyone');
    expect(r.draft.summary.length).toBeLessThanOrEqual(120);
    expect(r.draft.detail).toBe('see hxxps://evil[.]test/a');
  });

  it('falls back to the built-in message when a template fails at render time', async () => {
    const huge = await apply(
      { ntfy: { detail: '{% for i in (1..5000) %}xx{% endfor %}' } },
      { name: 'p', type: 'ntfy' },
    );
    expect(huge).toMatchObject({ kind: 'failed', key: 'ntfy', field: 'detail', draft: DRAFT });
    const slow = await apply(
      { ntfy: { summary: '{% for i in (1..100000000) %}{% endfor %}' } },
      { name: 'p', type: 'ntfy' },
    );
    expect(slow).toMatchObject({ kind: 'failed', field: 'summary', draft: DRAFT });
  });

  it('sees only the structured fields, not prototype properties', async () => {
    const r = await apply(
      { ntfy: { summary: '{{ summary.constructor }}|{{ task.__proto__ }}|{{ eventId }}|{{ actions }}' } },
      { name: 'p', type: 'ntfy' },
    );
    expect(r).toMatchObject({ kind: 'templated', draft: { summary: '|||' } });
  });
});
