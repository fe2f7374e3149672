#!/usr/bin/env node
/**
 * The `switchboard` binary. `switchboard hook <runtime>` runs on every tool call of an agent, so it
 * skips commander and the rest of the CLI: it loads the bundled bridge (dist/hook.mjs, node: modules
 * only) and nothing else. Every other command goes through program.ts.
 */
const [command, runtime] = process.argv.slice(2);
if (command === 'hook' && runtime && !runtime.startsWith('-')) {
  process.argv.splice(2, 1); // the bridge reads `<runtime> [json]` from argv[2…]
  try {
    await import(new URL('../hook.mjs', import.meta.url).href);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    await import('../hook/entry.js'); // not bundled (running from a plain tsc build)
  }
} else {
  // Before the modules load, so start-up does not grow the young generation (src/server/heap.ts).
  if (command === 'serve') (await import('../server/heap.js')).startLean();
  await import('./program.js');
}
