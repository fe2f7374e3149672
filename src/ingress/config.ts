import { describeIssues } from '../config/load.js';
import { z } from 'zod';
import { loopSchema, triggersSchema } from './admission/config.js';
import { compileTriggers, TriggerConfigError } from './admission/triggers.js';
import { type SourceConfig, sourceConfigSchema } from './sources/index.js';

/**
 * One `sources.<name>` entry as the ingress route reads it: the verifier's own strict config plus
 * `tenant`, the tenant its deliveries belong to (default: the configured `tenant.id`). The verifier
 * schemas stay strict and never see `tenant`.
 */
export const ingressSourceSchema = z
  .looseObject({ tenant: z.string().min(1).optional() })
  .transform((entry, ctx): { tenant: string | undefined; source: SourceConfig } => {
    const { tenant, ...rest } = entry;
    const parsed = sourceConfigSchema.safeParse(rest);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === 'unrecognized_keys') {
          for (const key of issue.keys) {
            ctx.addIssue({
              code: 'custom',
              path: [...issue.path, key],
              message: 'unknown key; remove it or check its spelling against docs/ingress-sources.md',
            });
          }
        } else {
          ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
        }
      }
      return z.NEVER;
    }
    return { tenant, source: parsed.data };
  });

export type IngressSourceConfig = z.output<typeof ingressSourceSchema>;

export const ingressSourcesSchema = z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/), ingressSourceSchema);

/**
 * The config check the loader runs for ingress (`moduleConfigChecks`): `sources` entries, `triggers`
 * (schema, CEL, sources they name) and `loop`, each problem with its path. Secrets are not resolved
 * here: a missing environment variable is reported when the module starts.
 */
export function checkIngressConfig(config: {
  sources: Record<string, unknown>;
  triggers: unknown[];
  loop?: unknown;
}): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const issues = (prefix: string, error: z.ZodError) =>
    describeIssues(error.issues.slice(0, 20)).map((p) => ({
      path:
        p.path === '(root)' ? prefix : p.path.startsWith('[') ? `${prefix}${p.path}` : `${prefix}.${p.path}`,
      message: p.message,
    }));
  const sources = ingressSourcesSchema.safeParse(config.sources);
  if (!sources.success) problems.push(...issues('sources', sources.error));
  const loop = loopSchema.safeParse(config.loop ?? {});
  if (!loop.success) problems.push(...issues('loop', loop.error));
  const triggers = triggersSchema.safeParse(config.triggers);
  if (!triggers.success) {
    problems.push(...issues('triggers', triggers.error));
    return problems;
  }
  const names = new Set(Object.keys(config.sources));
  triggers.data.forEach((t, i) => {
    try {
      compileTriggers([t], names);
    } catch (err) {
      if (!(err instanceof TriggerConfigError)) throw err;
      problems.push({ path: `triggers.${i}`, message: err.message });
    }
  });
  return problems;
}
