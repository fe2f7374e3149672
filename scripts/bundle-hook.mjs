// Bundles the command-hook bridge into one file, dist/hook.mjs, so a hook starts without resolving
// dozens of modules: `node dist/hook.mjs <runtime>` (what `switchboard hook` runs). Node built-ins only.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/hook/entry.ts'],
  outfile: 'dist/hook.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'bundle',
  minify: false,
  legalComments: 'none',
  logLevel: 'warning',
});
