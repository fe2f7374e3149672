import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXAMPLE_CONFIG } from '../config/example.js';

export async function run(opts: { output: string; force?: boolean }): Promise<void> {
  const path = resolve(opts.output);
  if (existsSync(path) && !opts.force) {
    throw new Error(`${path} already exists; pass --force to overwrite it`);
  }
  writeFileSync(path, EXAMPLE_CONFIG, { mode: 0o600 });
  process.stdout.write(
    `wrote ${path}\nnext: set the keys it names (e.g. export SB_AGENT_KEY=$(openssl rand -hex 24)), then run: switchboard doctor\n`,
  );
}
