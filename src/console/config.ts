import { z } from 'zod';

/** Twelve hours: a working day signed in, and a lost laptop's session dies overnight. */
export const SESSION_TTL_SECONDS = 12 * 3600;

/** The `console:` section. */
export const consoleConfigSchema = z.strictObject({
  /** `false` serves no console (every `/console/` path answers 404). */
  enabled: z.boolean().default(true),
  /** How long a sign-in lasts; there is no sliding renewal (a GET never writes). */
  session_ttl_seconds: z
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(SESSION_TTL_SECONDS),
});

export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;
