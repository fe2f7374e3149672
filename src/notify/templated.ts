import type { SecretKind } from '../scan/secrets.js';
import { type ContentOptions, gateContent } from './content.js';
import type { Draft } from './message.js';
import { type CompiledTemplates, renderTemplate, type TemplateEngine, templatesFor } from './templates.js';

/**
 * One channel's message with the user's template applied, and then the content gate: a template is
 * user text over agent text, so its output is trusted no more than the report was.
 */
export type Templated =
  | { kind: 'builtin'; draft: Draft }
  | { kind: 'templated'; key: string; draft: Draft }
  | { kind: 'failed'; key: string; field: string; message: string; draft: Draft }
  | { kind: 'blocked'; key: string; secrets: SecretKind[] };

export async function applyTemplate(
  engine: TemplateEngine,
  templates: CompiledTemplates,
  channel: { name: string; type: string | undefined },
  draft: Draft,
  gate: ContentOptions,
): Promise<Templated> {
  const set = templatesFor(templates, channel);
  if (!set) return { kind: 'builtin', draft };
  const r = await renderTemplate(engine, set.fields, draft);
  if (r.kind === 'failed') return { kind: 'failed', key: set.key, field: r.field, message: r.message, draft };
  // An empty rendering keeps the built-in field: a message without a summary helps nobody.
  const summary = r.summary || draft.summary;
  const detail = r.detail !== undefined ? r.detail || undefined : draft.detail;
  const title = r.title || draft.title;
  const body = gateContent(
    {
      summary,
      ...(detail !== undefined ? { detail } : {}),
      ...(draft.artifact !== undefined ? { artifact: draft.artifact } : {}),
    },
    gate,
  );
  const head = gateContent({ summary: title }, gate);
  if (body.kind === 'blocked' || head.kind === 'blocked') {
    const secrets = [
      ...new Set([
        ...(body.kind === 'blocked' ? body.secrets : []),
        ...(head.kind === 'blocked' ? head.secrets : []),
      ]),
    ];
    return { kind: 'blocked', key: set.key, secrets };
  }
  const out: Draft = { ...draft, title: head.content.summary, summary: body.content.summary };
  if (body.content.detail !== undefined) out.detail = body.content.detail;
  else delete out.detail;
  if (body.content.artifact !== undefined) out.artifact = body.content.artifact;
  else delete out.artifact;
  return { kind: 'templated', key: set.key, draft: out };
}
