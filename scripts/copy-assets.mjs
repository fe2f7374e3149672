// tsc compiles TypeScript only; the migrations are SQL files the store reads at run time.
// Usage: node scripts/copy-assets.mjs [outDir]   (default dist; the bench build passes dist-bench/src)
import { cpSync } from 'node:fs';

const out = process.argv[2] ?? 'dist';
cpSync('src/store/migrations', `${out}/store/migrations`, { recursive: true });
