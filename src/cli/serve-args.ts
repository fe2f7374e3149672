import type { ServeOptions } from './serve.js';

/** `serve`'s options that take a value, by every spelling commander accepts for them (program.ts). */
const VALUED: Record<string, 'config' | 'host' | 'port' | 'logFormat'> = {
  '-c': 'config',
  '--config': 'config',
  '--host': 'host',
  '--port': 'port',
  '--log-format': 'logFormat',
};

/**
 * `switchboard serve`'s argv read without commander, so a running gateway does not keep the CLI's
 * parser and every subcommand's declaration in its heap (issue 13's idle memory). Only the plain
 * forms are read here; anything else (`--help`, an unknown option, an argument, a value that starts
 * with `-`) answers undefined and goes through program.ts, which says what is wrong exactly as before.
 * The spellings must stay those program.ts declares: `serve-args.test.ts` compares the two.
 */
export function parseServeArgs(args: readonly string[]): ServeOptions | undefined {
  const opts: ServeOptions = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--allow-no-keys') {
      opts.allowNoKeys = true;
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const key = VALUED[name];
    if (!key || (eq > 0 && name === '-c')) return undefined;
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === '' || value.startsWith('-')) return undefined;
    opts[key] = value;
  }
  return opts;
}
