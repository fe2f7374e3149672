import { z } from 'zod';
import { triggersSchema } from './admission/config.js';
import { compileTrigger, TriggerConfigError } from './admission/triggers.js';
import { parseCidr } from './pipeline/binding.js';
import { type SourceConfig, sourceConfigSchema } from './sources/index.js';

/**
 * One `sources.<name>` entry as the ingress route reads it: the verifier's own strict config plus
 * `tenant`, the tenant its deliveries belong to (default: the configured `tenant.id`), `allow_ips` and
 * `tenants` (pipeline/binding.ts). The verifier schemas stay strict and never see these.
 */
const cidr = z
  .string()
  .refine((v) => parseCidr(v) !== undefined, 'an address or CIDR, e.g. 192.30.252.0/22 or 2a0a:a440::/29');

export const ingressSourceSchema = z
  .looseObject({
    tenant: z.string().min(1).optional(),
    /** Only these senders may deliver (CIDRs); absent: any address (the signature is the credential). */
    allow_ips: z.array(cidr).min(1).optional(),
    /** The tenant of a delivery by the verified installation, repository or workspace id it names. */
    tenants: z.record(z.string().min(1).max(300), z.string().min(1).max(200)).optional(),
  })
  .transform((entry, ctx): IngressSourceEntry => {
    const { tenant, allow_ips, tenants, ...rest } = entry;
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
    return {
      tenant,
      source: parsed.data,
      ...(allow_ips ? { allow_ips } : {}),
      ...(tenants ? { tenants } : {}),
    };
  });

/** A source as the route reads it: the verifier's config, and the binding around it. */
export interface IngressSourceEntry {
  tenant: string | undefined;
  source: SourceConfig;
  allow_ips?: string[];
  tenants?: Record<string, string>;
}

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

/** `server.trusted_proxies` is a core key, read by the ingress route: each entry an address or CIDR. */
export function checkTrustedProxies(
  config: Readonly<Record<string, unknown>>,
): { path: string; message: string }[] {
  const server = (config['server'] ?? {}) as { trusted_proxies?: unknown };
  const list = Array.isArray(server.trusted_proxies) ? server.trusted_proxies : [];
  return list.flatMap((v, i) =>
    typeof v === 'string' && parseCidr(v) !== undefined
      ? []
      : [{ path: `server.trusted_proxies[${i}]`, message: 'an address or CIDR, e.g. 10.0.0.0/8 or ::1' }],
  );
}
