// The spawner helper (src/tasks/spawner.ts): a small Node.js process the gateway forks once and asks,
// over its IPC channel, to start agent processes. Forking copies the parent's page tables, so a spawn
// from the gateway (150–200 MB) blocks its event loop for 5–8 ms; from this process (~40 MB) it takes
// about 1 ms and blocks nothing of the gateway. Plain CommonJS so the same file runs under the test
// runner (from src/) and from the build (copied to dist/ by scripts/copy-assets.mjs). `startAgent` is
// also what `startProcess(spec, 'inline')` runs in the gateway itself (src/tasks/process.ts).
//
// In:  { t: 'spawn', id, argv, cwd, env, stdinFile, logDir }
// Out: { t: 'spawned', id, pid } | { t: 'failed', id, error } | { t: 'exit', id, code, signal }
'use strict';
const { spawn } = require('node:child_process');
const { closeSync, openSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Starts one agent: no shell, its own process group, the input file as stdin and log files as its
 * output (no pipes). Reports `spawned` or `failed`, then `exit`, through `report`.
 */
function startAgent(m, report) {
  const fds = [];
  let child;
  try {
    fds.push(openSync(m.stdinFile, 'r'));
    fds.push(openSync(join(m.logDir, 'stdout.log'), 'a', 0o600));
    fds.push(openSync(join(m.logDir, 'stderr.log'), 'a', 0o600));
    child = spawn(m.argv[0], m.argv.slice(1), {
      cwd: m.cwd,
      env: m.env,
      shell: false,
      detached: true,
      stdio: fds,
    });
  } catch (e) {
    report({ t: 'failed', id: m.id, error: `could not start ${m.argv[0]}: ${e.message}` });
    return;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  // libuv reports an exec failure before spawn returns: such a child has no pid, and its 'error' says why.
  if (child.pid === undefined) {
    child.once('error', (e) =>
      report({ t: 'failed', id: m.id, error: `could not start ${m.argv[0]}: ${e.message}` }),
    );
    return;
  }
  child.once('error', () => {});
  child.once('exit', (code, signal) => report({ t: 'exit', id: m.id, code, signal }));
  report({ t: 'spawned', id: m.id, pid: child.pid });
}

function send(message) {
  // A gateway gone cannot be told; its children are detached and outlive it, as they would without us.
  if (process.connected) process.send(message);
}

module.exports = { startAgent };

if (require.main === module) {
  process.on('message', (m) => {
    if (m && m.t === 'spawn') startAgent(m, send);
  });
  // The gateway exited or closed the channel: nothing is left to report to.
  process.on('disconnect', () => process.exit(0));
}
