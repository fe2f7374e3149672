import { createRequire } from 'node:module';
import type { Liquid, Template } from 'liquidjs';
import { z } from 'zod';
import type { Draft } from './message.js';
import { prefix } from '../text/index.js';

/**
 * User overrides of a message's title, summary and detail: `notify.templates.<channel type or channel
 * name>`, LiquidJS templates over the structured message. The engine is sandboxed: no file system
 * (an empty in-memory template map), no include/render/layout/block tags at all, only built-in
 * filters (an unknown filter is a parse error), only own properties of the data, and limits on parse
 * and render. Rendering happens before the content gate, so whatever a template produces is still
 * scanned for secrets, defanged, stripped of mass mentions and cut to the caps.
 */

/** A template is a line or a short card, not a program: bigger sources are a config error. */
export const TEMPLATE_MAX_CHARS = 4096;
/** Output per field, in bytes: above it the template is treated as broken and the built-in is used. */
export const TEMPLATE_OUTPUT_MAX_BYTES = 4096;
/** Milliseconds one render may take: a loop over `(1..1000000)` must not hold up the delivery path. */
export const TEMPLATE_RENDER_LIMIT_MS = 50;

/** Tags that read other templates (from the file system unless mapped): refused outright. */
const REFUSED_TAGS = ['include', 'render', 'layout', 'block'] as const;

const FIELDS = ['title', 'summary', 'detail'] as const;
type Field = (typeof FIELDS)[number];

export const templateSchema = z.strictObject({
  title: z.string().max(TEMPLATE_MAX_CHARS).optional(),
  summary: z.string().max(TEMPLATE_MAX_CHARS).optional(),
  detail: z.string().max(TEMPLATE_MAX_CHARS).optional(),
});

/** Keyed by a channel type (`ntfy`, `slack`, …) or a channel name; a name wins over its type. */
export const templatesSchema = z.record(z.string().min(1), templateSchema).default({});

export type TemplatesConfig = z.infer<typeof templatesSchema>;
export type CompiledTemplates = ReadonlyMap<string, Partial<Record<Field, Template[]>>>;

/** What notify asks of LiquidJS: parse a template at load, render it per message. */
export interface TemplateEngine {
  parse(source: string): Template[];
  render(template: Template[], scope: object): Promise<unknown>;
}

/**
 * The sandboxed engine, made on first use: liquidjs (about 350 KB of JavaScript) loads only when a
 * config has templates, not at every start (issue 13, idle memory). It is CommonJS, so this `require`
 * and an `import 'liquidjs'` share one instance.
 */
export function templateEngine(): TemplateEngine {
  let engine: Liquid | undefined;
  const made = () => {
    engine ??= makeEngine();
    return engine;
  };
  return {
    parse: (source) => made().parse(source),
    render: (template, scope) => made().render(template, scope),
  };
}

function makeEngine(): Liquid {
  const { Liquid } = createRequire(import.meta.url)('liquidjs') as typeof import('liquidjs');
  const engine = new Liquid({
    strictFilters: true,
    strictVariables: false,
    ownPropertyOnly: true,
    // An empty in-memory map: even if a tag that loads templates existed, it could not reach a file.
    templates: {},
    parseLimit: TEMPLATE_MAX_CHARS,
    renderLimit: TEMPLATE_RENDER_LIMIT_MS,
    memoryLimit: 1_000_000,
  });
  for (const tag of REFUSED_TAGS) delete engine.tags[tag];
  return engine;
}

export type CompileOutcome =
  | { ok: true; templates: CompiledTemplates }
  | { ok: false; problems: { path: string; message: string }[] };

/** Parses every template once, at load: a template that does not parse is a config error at its key path. */
export function compileTemplates(engine: TemplateEngine, config: TemplatesConfig): CompileOutcome {
  const out = new Map<string, Partial<Record<Field, Template[]>>>();
  const problems: { path: string; message: string }[] = [];
  for (const [key, fields] of Object.entries(config)) {
    const compiled: Partial<Record<Field, Template[]>> = {};
    for (const field of FIELDS) {
      const source = fields[field];
      if (source === undefined) continue;
      try {
        compiled[field] = engine.parse(source);
      } catch (err) {
        problems.push({ path: `notify.templates.${key}.${field}`, message: firstLine(err) });
      }
    }
    out.set(key, compiled);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, templates: out };
}

/** For `src/server/checks.ts`: problems of `notify.templates` (key path and message); [] when fine. */
export function templateProblems(notify: unknown): { path: string; message: string }[] {
  const raw = (notify as { templates?: unknown } | undefined)?.templates;
  const parsed = templatesSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    return parsed.error.issues.map((i) => ({
      path: ['notify', 'templates', ...i.path.map(String)].join('.'),
      message: i.message,
    }));
  }
  const compiled = compileTemplates(templateEngine(), parsed.data);
  return compiled.ok ? [] : compiled.problems;
}

/** The template set for one channel: its name's, else its type's, else none. */
export function templatesFor(
  templates: CompiledTemplates,
  channel: { name: string; type: string | undefined },
): { key: string; fields: Partial<Record<Field, Template[]>> } | undefined {
  const byName = templates.get(channel.name);
  if (byName) return { key: channel.name, fields: byName };
  const byType = channel.type !== undefined ? templates.get(channel.type) : undefined;
  return byType && channel.type !== undefined ? { key: channel.type, fields: byType } : undefined;
}

export type RenderOutcome =
  | { kind: 'ok'; title?: string; summary?: string; detail?: string }
  | { kind: 'failed'; field: Field; message: string };

/** What a template sees: the structured message, never recipients, links with tokens or event ids. */
export function templateScope(draft: Draft): Record<string, unknown> {
  return {
    kind: draft.kind,
    stage: draft.stage,
    severity: draft.severity,
    title: draft.title,
    summary: draft.summary,
    detail: draft.detail ?? '',
    artifact: draft.artifact ?? '',
    task: draft.task ? { id: draft.task.id, name: draft.task.name ?? '' } : { id: '', name: '' },
    agent: draft.agent ?? '',
    locale: draft.locale ?? 'en',
  };
}

export async function renderTemplate(
  engine: TemplateEngine,
  fields: Partial<Record<Field, Template[]>>,
  draft: Draft,
): Promise<RenderOutcome> {
  const scope = templateScope(draft);
  const out: { title?: string; summary?: string; detail?: string } = {};
  for (const field of FIELDS) {
    const tpl = fields[field];
    if (!tpl) continue;
    let text: string;
    try {
      text = String(await engine.render(tpl, scope));
    } catch (err) {
      return { kind: 'failed', field, message: firstLine(err) };
    }
    if (Buffer.byteLength(text, 'utf8') > TEMPLATE_OUTPUT_MAX_BYTES) {
      return { kind: 'failed', field, message: `output over ${TEMPLATE_OUTPUT_MAX_BYTES} bytes` };
    }
    out[field] = text.trim();
  }
  return { kind: 'ok', ...out };
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return prefix(msg.split('\n')[0] ?? msg, 300);
}
