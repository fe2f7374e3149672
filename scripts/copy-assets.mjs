// tsc compiles TypeScript only; each module's migrations are SQL files the store reads at run time
// (`src/<module>/migrations/{sqlite,postgres}/NNNN_name.sql`, named in the module's manifest), and a
// module's `assets/` are files it serves or runs as they are (the console's script and style sheet, the
// tasks module's spawner helper).
// Usage: node scripts/copy-assets.mjs [outDir]   (default dist; the bench build passes dist-bench/src)
import { cpSync, existsSync, readdirSync } from 'node:fs';

const out = process.argv[2] ?? 'dist';
for (const entry of readdirSync('src', { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;
  for (const folder of ['migrations', 'assets']) {
    const from = `src/${entry.name}/${folder}`;
    if (existsSync(from)) cpSync(from, `${out}/${entry.name}/${folder}`, { recursive: true });
  }
}
