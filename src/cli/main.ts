#!/usr/bin/env node
/**
 * The `switchboard` binary. `switchboard hook <runtime>` runs on every tool call of an agent, so it
 * skips commander and the rest of the CLI: it loads the bundled bridge (dist/hook.mjs, node: modules
 * only) and nothing else. `switchboard serve` with plain options skips commander too (serve-args.ts),
 * so an idle gateway does not hold the CLI. Every other command goes through program.ts.
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
} else if (command === 'serve') {
  // Before the modules load, so start-up does not grow the young generation (src/server/heap.ts).
  (await import('../server/heap.js')).startLean();
  // The plain forms skip commander, which a running gateway would otherwise keep (issue 13).
  const opts = (await import('./serve-args.js')).parseServeArgs(process.argv.slice(3));
  if (opts) {
    const { fail } = await import('./output.js');
    await (await import('./serve.js')).run(opts).catch(fail);
  } else await import('./program.js');
} else {
  await import('./program.js');
}
