import { ConfigError } from '../config/load.js';
import { AppError } from '../errors/index.js';

/** Every command fails the same way: one clear line per problem on stderr, exit 1. */
export function fail(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`switchboard: invalid config (${err.source}):\n`);
    for (const p of err.problems) process.stderr.write(`  ${p.path}: ${p.message}\n`);
  } else if (err instanceof AppError) {
    process.stderr.write(`switchboard: ${err.message}${describeCause(err.cause)}\n`);
  } else if (err instanceof Error) {
    process.stderr.write(`switchboard: ${err.message}\n`);
  } else {
    process.stderr.write(`switchboard: ${String(err)}\n`);
  }
  process.exit(1);
}

function describeCause(cause: unknown): string {
  const c = cause as { code?: string; message?: string } | undefined;
  if (!c?.message) return '';
  return ` (${c.code ? `${c.code}: ` : ''}${c.message.split('\n')[0]})`;
}
