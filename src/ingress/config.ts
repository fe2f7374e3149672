import { z } from 'zod';
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
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
      return z.NEVER;
    }
    return { tenant, source: parsed.data };
  });

export type IngressSourceConfig = z.output<typeof ingressSourceSchema>;

export const ingressSourcesSchema = z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/), ingressSourceSchema);
