import { z } from 'zod';

/**
 * The `hooks:` section. Until the lead adds it to the config schema, `runtimesModule` reads
 * `services.config.hooks` loosely and parses it with this schema in `start()`.
 */
export const hooksConfigSchema = z.strictObject({
  /**
   * How long a hook that needs an approval is held open, waiting for a person. Unset (the default):
   * as long as the runtime allows, minus a margin (`runtimeHoldMs`: 590 s for Claude Code and Codex),
   * because someone away from the desk needs minutes, not seconds. Set: at most this, still capped by
   * the runtime. 0 answers at once.
   */
  approval_wait_seconds: z.number().int().min(0).max(3600).optional(),
});

export type HooksConfig = z.infer<typeof hooksConfigSchema>;

export function parseHooksConfig(raw: unknown): HooksConfig {
  return hooksConfigSchema.parse(raw ?? {});
}
