import { z } from 'zod';
import { type SecretLookup, SourceConfigError } from '../../source.js';

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, _)');

/** One value, or several during a key rotation: any one of them is accepted. */
export const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).min(1).max(8)]);

export const secretEnvField = oneOrMany(envName);
export const secretLiteralField = oneOrMany(z.string().min(1, 'must not be empty'));

type Many = string | readonly string[] | undefined;

/** For `superRefine`: exactly one of `<name>_env` and `<name>` must be set (or at most one if optional). */
export function checkSecretPair(
  value: Record<string, unknown>,
  ctx: z.RefinementCtx,
  name: string,
  required = true,
): void {
  const env = value[`${name}_env`] !== undefined;
  const literal = value[name] !== undefined;
  if (env && literal) {
    ctx.addIssue({ code: 'custom', path: [name], message: `set ${name}_env or ${name}, not both` });
  } else if (required && !env && !literal) {
    ctx.addIssue({
      code: 'custom',
      path: [`${name}_env`],
      message: `required: ${name}_env (the environment variable holding it) or ${name}`,
    });
  }
}

const asList = (v: Many): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

/** The secret values, from the environment or literal config; throws naming the variable, never a value. */
export function resolveSecrets(
  envNames: Many,
  literals: Many,
  lookup: SecretLookup,
  label: string,
): string[] {
  const fromEnv = asList(envNames).map((name) => {
    const value = lookup(name);
    if (value === undefined || value === '') {
      throw new SourceConfigError(`${label}: environment variable ${name} is not set`);
    }
    return value;
  });
  return [...fromEnv, ...asList(literals)];
}
