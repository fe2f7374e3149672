import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { configJsonSchema } from '../server/config.js';
import { EXAMPLE_CONFIG } from '../config/example.js';
import { loadCliConfig } from './context.js';
import { ensureKeyFiles } from './keys.js';

/** Where init puts the JSON Schema, relative to the config: in the data dir, refreshed by `config schema -o`. */
export const SCHEMA_FILE = '.switchboard/switchboard.schema.json';
/** Editors with the YAML language server (VS Code's YAML extension, Neovim, Zed) complete keys from it. */
export const SCHEMA_LINE = `# yaml-language-server: $schema=./${SCHEMA_FILE}`;

export function writeSchemaFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
}

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
  writeFileSync(path, `${SCHEMA_LINE}\n${EXAMPLE_CONFIG}`, { mode: 0o600 });
  const { config } = loadCliConfig({ config: path });
  writeSchemaFile(resolve(dirname(path), SCHEMA_FILE));
  const made = ensureKeyFiles(config.auth.keys);
  const dir = relative(process.cwd(), resolve(config.data_dir, 'keys')) || '.';
  process.stdout.write(
    `wrote ${path}\n${made.length ? `generated keys ${made.join(', ')} in ${dir}/ (owner-only; switchboard keys list)\n` : ''}next: switchboard doctor, then switchboard serve\n`,
  );
}
