import { existsSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { EXAMPLE_CONFIG } from '../config/example.js';
import { loadCliConfig } from './context.js';
import { ensureKeyFiles } from './keys.js';

export interface InitOptions {
  output: string;
  force?: boolean;
  /** Leave an existing config alone and succeed (what `npm start` does on every start). */
  ifMissing?: boolean;
}

/**
 * Writes the commented config and generates the keys it names into owner-only files, so a new shell or
 * a reboot finds the same keys. Existing key files are kept, even with --force: rotating is
 * `switchboard keys rotate`, never a side effect.
 */
export async function run(opts: InitOptions): Promise<void> {
  const path = resolve(opts.output);
  if (existsSync(path) && opts.ifMissing) return;
  if (existsSync(path) && !opts.force) {
    throw new Error(`${path} already exists; pass --force to overwrite it`);
  }
  writeFileSync(path, EXAMPLE_CONFIG, { mode: 0o600 });
  const { config } = loadCliConfig({ config: path });
  const made = ensureKeyFiles(config.auth.keys);
  const dir = relative(process.cwd(), resolve(config.data_dir, 'keys')) || '.';
  process.stdout.write(
    `wrote ${path}\n${made.length ? `generated keys ${made.join(', ')} in ${dir}/ (owner-only; switchboard keys list)\n` : ''}next: switchboard doctor, then switchboard serve\n`,
  );
}
