import { z } from 'zod';
import { triggersSchema } from './admission/config.js';
import { compileTrigger, TriggerConfigError } from './admission/triggers.js';
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
 * `triggers:` as the ingress manifest declares it: the schema, then every trigger's CEL compiled, each
 * failure named `triggers.<i>`. That a trigger's source exists is a check across keys (below).
 */
export const triggersSectionSchema = triggersSchema
  .superRefine((list, ctx) => {
    list.forEach((t, i) => {
      try {
        compileTrigger(t);
      } catch (err) {
        if (!(err instanceof TriggerConfigError)) throw err;
        ctx.addIssue({ code: 'custom', path: [String(i)], message: err.message });
      }
    });
  })
  .default([]);

/** Every trigger names a configured source; run on the parsed config. */
export function checkTriggerSources(
  config: Readonly<Record<string, unknown>>,
): { path: string; message: string }[] {
  const names = new Set(Object.keys((config['sources'] ?? {}) as Record<string, unknown>));
  const triggers = (config['triggers'] ?? []) as z.output<typeof triggersSchema>;
  return triggers.flatMap((t, i) =>
    names.has(t.source)
      ? []
      : [
          {
            path: `triggers.${i}`,
            message: `trigger ${t.id}: source ${t.source} is not configured under sources`,
          },
        ],
  );
}
