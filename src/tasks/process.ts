import { Spawner, spawnInline } from './spawner.js';

export { pidAlive } from './spawner.js';

export type Exit =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  /** The spawner helper that would have reported the exit died first (src/tasks/spawner.ts). */
  | { kind: 'lost'; error: string };

export interface ProcessSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** The agent's stdin: this file itself, read-only (the one it finds in SWITCHBOARD_INPUT_FILE). */
  stdinFile: string;
  /** stdout.log and stderr.log go here. */
  logDir: string;
}

export interface AgentProcess {
  pid: number;
  exited: Promise<Exit>;
  /** SIGTERM to the process group, SIGKILL after `graceMs` if it is still there. */
  terminate(graceMs: number): void;
}

export type Started = { ok: true; process: AgentProcess } | { ok: false; error: string };

/** Where processes are forked: the spawner helper (the default), or the gateway itself. */
export type SpawnFrom = 'helper' | 'inline';

const spawner = new Spawner();

/**
 * Starts the agent: no shell, its own process group (so a kill reaches the tools it started), the
 * input file itself as its stdin and log files in the work dir as its output: no pipes, so nothing on
 * the event loop feeds or drains them while the task's start is being recorded. Forked by the spawner
 * helper unless `from` is `inline` (src/tasks/spawner.ts says why).
 */
export async function startProcess(spec: ProcessSpec, from: SpawnFrom = 'helper'): Promise<Started> {
  const spawned = await (from === 'helper' ? spawner.spawn(spec) : spawnInline(spec));
  if (!spawned.ok) return spawned;
  const { pid, exited } = spawned;
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    ok: true,
    process: {
      pid,
      exited,
      terminate(graceMs) {
        if (done) return;
        signalGroup(pid, 'SIGTERM');
        const t = setTimeout(() => {
          if (!done) signalGroup(pid, 'SIGKILL');
        }, graceMs);
        t.unref();
        void exited.then(() => clearTimeout(t));
      },
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
