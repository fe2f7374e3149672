import { z } from 'zod';

/**
 * The `hooks:` section. Until the lead adds it to the config schema, `runtimesModule` reads
 * `services.config.hooks` loosely and parses it with this schema in `start()`.
 */
export const hooksConfigSchema = z.strictObject({
  /**
   * How long a hook that needs an approval is held open, waiting for a person. 50 s keeps the whole
   * round trip under the 60 s hook timeout of Hermes and Gemini CLI; the route never holds longer than
   * 0.8 × the runtime's own timeout either way.
   */
  approval_wait_seconds: z.number().int().min(0).max(3600).default(50),
});

export type HooksConfig = z.infer<typeof hooksConfigSchema>;

export function parseHooksConfig(raw: unknown): HooksConfig {
  return hooksConfigSchema.parse(raw ?? {});
}
