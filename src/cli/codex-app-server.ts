import { homedir } from 'node:os';
import { runtimeFor } from '../runtimes/index.js';
import { DEFAULT_APP_SERVER_COMMAND, runAppServerBridge } from '../hook/app-server.js';
import { bridgeSettings } from '../hook/settings.js';

/**
 * `switchboard codex-app-server [--command "codex app-server"] [-- argv…]`: the App Server bridge
 * (src/hook/app-server.ts). Gateway URL, key, timeout and fail mode are the hook bridge's
 * (`SWITCHBOARD_URL`, `SWITCHBOARD_KEY`, `~/.config/switchboard/hook.json`); the exit code is the server's.
 */
export async function run(argv: string[], opts: { command?: string }): Promise<void> {
  const command =
    argv.length > 0
      ? argv
      : opts.command
        ? opts.command.split(/\s+/).filter((a) => a !== '')
        : DEFAULT_APP_SERVER_COMMAND;
  if (command.length === 0) {
    process.stderr.write('switchboard codex-app-server: --command is empty; name the app server to run\n');
    process.exitCode = 2;
    return;
  }
  process.exitCode = await runAppServerBridge({
    command,
    settings: bridgeSettings(runtimeFor('codex')!, process.env, homedir()),
    input: process.stdin,
    output: process.stdout,
    errors: process.stderr,
  });
}
