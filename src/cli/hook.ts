import { runHookProcess } from '../hook/main.js';

/** `switchboard hook <runtime> [json]`: the command-hook bridge (src/hook/bridge.ts). */
export async function run(runtime: string, args: string[] = []): Promise<void> {
  await runHookProcess([runtime, ...args]);
}
