// tsc compiles TypeScript only; the migrations are SQL files the store reads at run time.
import { cpSync } from 'node:fs';

cpSync('src/store/migrations', 'dist/store/migrations', { recursive: true });
