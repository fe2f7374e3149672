import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/**
 * undici (about 1 MB of JavaScript and its llhttp WebAssembly, some 10 MB resident) loads with the
 * first outbound request, not at start: a gateway that has sent nothing does not hold it (issue 13,
 * idle memory). It is CommonJS only, so this `require` and any `import 'undici'` share one instance.
 */
let loaded: typeof Undici | undefined;

export function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return loaded;
}
