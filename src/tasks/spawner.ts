import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Exit, ProcessSpec } from './process.js';

const SCRIPT = fileURLToPath(new URL('./assets/spawner.cjs', import.meta.url));
/** How often a child is looked for once the helper that would report its exit is gone. */
const LOST_POLL_MS = 250;

type Reply = { t: 'spawned'; id: number; pid: number } | { t: 'failed'; id: number; error: string };
type ExitReport = { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };
type Report = Reply | ExitReport;

/** The helper's own start of one agent, run here for `startProcess(spec, 'inline')`. */
const { startAgent } = createRequire(import.meta.url)(SCRIPT) as {
  startAgent(m: ProcessSpec & { id: number }, report: (r: Report) => void): void;
};

/** The fork from the gateway's own process: what the helper does, here. */
export function spawnInline(spec: ProcessSpec): Promise<Spawned> {
  let exit!: (e: Exit) => void;
  const exited = new Promise<Exit>((r) => {
    exit = r;
  });
  return new Promise((resolve) =>
    startAgent({ id: 0, ...spec }, (r) => {
      if (r.t === 'spawned') resolve({ ok: true, pid: r.pid, exited });
      else if (r.t === 'failed') resolve({ ok: false, error: r.error });
      else exit({ kind: 'exited', code: r.code, signal: r.signal });
    }),
  );
}

interface Entry {
  /** Set until the helper has answered the spawn. */
  answer?: (r: { pid: number } | { error: string }) => void;
  pid?: number;
  exit: (e: Exit) => void;
}

export type Spawned = { ok: true; pid: number; exited: Promise<Exit> } | { ok: false; error: string };

/**
 * Starts agent processes from a small helper process (`assets/spawner.cjs`) instead of the gateway:
 * a fork copies the forking process's page tables, so spawning from the gateway blocks its event loop
 * for 5–8 ms at 150–200 MB (every request in flight waits), where the helper (~40 MB) takes ~1 ms and
 * blocks nothing here. Signals still go from the gateway straight to the process group (same user);
 * the helper reports each child's exit. The helper is forked on the first spawn and kept; it holds the
 * gateway's event loop open only while a spawn or a child is outstanding.
 *
 * If the helper dies, a spawn it had not answered fails (the process may have started: the task is
 * recorded as failed, and its process, detached, runs on unwatched), and each running child is then
 * watched by polling its pid; its exit code is lost (`kind: 'lost'`). The next spawn forks a new helper.
 */
export class Spawner {
  private helper: ChildProcess | undefined;
  private readonly entries = new Map<number, Entry>();
  private next = 1;

  spawn(spec: ProcessSpec): Promise<Spawned> {
    const helper = this.helper ?? this.fork();
    const id = this.next++;
    let exit!: (e: Exit) => void;
    const exited = new Promise<Exit>((r) => {
      exit = r;
    });
    return new Promise<Spawned>((resolve) => {
      const entry: Entry = {
        exit,
        answer: (r) => {
          delete entry.answer;
          if ('error' in r) {
            this.entries.delete(id);
            this.hold();
            resolve({ ok: false, error: r.error });
          } else {
            entry.pid = r.pid;
            resolve({ ok: true, pid: r.pid, exited });
          }
        },
      };
      this.entries.set(id, entry);
      this.hold();
      helper.send({ t: 'spawn', id, ...spec }, (err) => {
        if (err)
          entry.answer?.({ error: `could not start ${spec.argv[0]}: the spawner helper: ${err.message}` });
      });
    });
  }

  /** Stops the helper (children keep running, detached); the next spawn forks a new one. */
  close(): void {
    this.helper?.disconnect();
  }

  private fork(): ChildProcess {
    // A clean environment and no execArgv: the gateway's flags (a profiler, --expose-gc) and secrets
    // are not the helper's; each child gets exactly the environment of its spec.
    const helper = fork(SCRIPT, [], { env: {}, execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    helper.on('message', (m: Report) => {
      const entry = this.entries.get(m.id);
      if (!entry) return;
      if (m.t === 'exit') {
        this.entries.delete(m.id);
        this.hold();
        entry.exit({ kind: 'exited', code: m.code, signal: m.signal });
      } else entry.answer?.(m.t === 'spawned' ? { pid: m.pid } : { error: m.error });
    });
    // A helper that could not be started has an 'error' and no 'exit'; either ends it here. A listener
    // stays on 'error' for good: a send to a helper that just died emits one too.
    helper.on('error', (err) => gone(`the spawner helper failed: ${err.message}`));
    helper.once('exit', (code, signal) => gone(`the spawner helper exited (${signal ?? `code ${code}`})`));
    const gone = (why: string) => {
      if (this.helper !== helper) return;
      this.helper = undefined;
      for (const [id, entry] of this.entries) {
        if (entry.answer) {
          this.entries.delete(id);
          entry.answer({ error: `could not start the agent process: ${why} before it answered` });
        } else if (entry.pid !== undefined) this.watch(id, entry, why);
      }
    };
    this.helper = helper;
    return helper;
  }

  /** A child whose helper is gone: polled until its pid is free. */
  private watch(id: number, entry: Entry, why: string): void {
    this.entries.delete(id);
    const pid = entry.pid!;
    const t = setInterval(() => {
      if (pidAlive(pid)) return;
      clearInterval(t);
      entry.exit({ kind: 'lost', error: `${why}; the agent process's exit code is unknown` });
    }, LOST_POLL_MS);
  }

  /** Keeps the event loop open while anything is outstanding, and lets it close otherwise. */
  private hold(): void {
    const h = this.helper;
    if (!h) return;
    if (this.entries.size > 0) {
      h.ref();
      h.channel?.ref();
    } else {
      h.unref();
      h.channel?.unref();
    }
  }
}

/** Whether a process with this pid exists on this host (signal 0 checks without sending). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
