import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = `${ROOT}dist/cli/main.js`;

/** End-to-end tests run the compiled gateway, as users do; `npm test` builds it first. */
export function requireBuild(): void {
  if (!existsSync(CLI))
    throw new Error('dist/ is missing: run `npm run build` (npm test does it) before the end-to-end tests');
}
