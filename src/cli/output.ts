/**
 * Every command fails the same way: one clear line per problem on stderr, exit 1. Errors are told
 * apart by name, not instanceof, so `--help` and the hook bridge do not load the config module.
 */
export function fail(err: unknown): never {
  const e = err as {
    name?: string;
    message?: string;
    source?: string;
    problems?: { path: string; message: string }[];
    cause?: unknown;
  };
  if (e?.name === 'ConfigError' && Array.isArray(e.problems)) {
    process.stderr.write(`switchboard: invalid config (${e.source}):\n`);
    for (const p of e.problems) process.stderr.write(`  ${p.path}: ${p.message}\n`);
  } else if (e?.name === 'AppError') {
    process.stderr.write(`switchboard: ${e.message}${describeCause(e.cause)}\n`);
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
