import { spawn } from 'node:child_process';
import { TouchFailure } from '../protocol.js';
import { excerpt } from './excerpt.js';
import { LineSplitter } from './lines.js';
import type { Backend } from './types.js';

/**
 * `command` tools: argv exactly as configured — parameters never become arguments, they arrive as one
 * JSON object on stdin — no shell, a clean environment (PATH, LANG and what the tool lists), its own
 * process group. At the deadline the whole group gets SIGKILL, so a script's children die with it;
 * leftovers of a command that exited are killed too. stdout is the result (JSON when it parses, else
 * text), capped; stderr is kept for the failure excerpt only.
 */

export const COMMAND_PATH = '/usr/local/bin:/usr/bin:/bin';
const STDERR_KEEP = 8 * 1024;

export interface CommandSpec {
  argv: string[];
  cwd?: string;
  /** Resolved at start: literal values and the values of `<NAME>_env` variables. */
  env: Record<string, string>;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

export function commandBackend(spec: CommandSpec): Backend {
  return {
    run(params, ctx) {
      return new Promise<unknown>((resolve, reject) => {
        if (ctx.signal.aborted) {
          reject(ctx.signal.reason);
          return;
        }
        const child = spawn(spec.argv[0]!, spec.argv.slice(1), {
          cwd: spec.cwd,
          env: { PATH: COMMAND_PATH, LANG: 'C.UTF-8', ...spec.env },
          detached: true,
          shell: false,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        const out: Buffer[] = [];
        let outSize = 0;
        const err: Buffer[] = [];
        let errSize = 0;
        let settled = false;
        const lines = ctx.onPartial ? new LineSplitter(ctx.onPartial) : undefined;
        const finish = (fn: () => void) => {
          if (settled) return;
          settled = true;
          ctx.signal.removeEventListener('abort', onAbort);
          killGroup(child.pid);
          fn();
        };
        const onAbort = () => finish(() => reject(ctx.signal.reason));
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        child.on('error', (e: NodeJS.ErrnoException) =>
          finish(() =>
            reject(
              new TouchFailure(
                'TOOL_FAILED',
                e.code === 'ENOENT' ? 'the command was not found' : `the command could not start (${e.code})`,
                { status: e.code ?? 'spawn' },
              ),
            ),
          ),
        );
        child.stdout.on('data', (b: Buffer) => {
          outSize += b.length;
          if (outSize > ctx.maxBytes) {
            finish(() =>
              reject(
                new TouchFailure(
                  'RESULT_TOO_LARGE',
                  `the command wrote more than ${ctx.maxBytes} bytes; ask for less`,
                  { limit_bytes: ctx.maxBytes },
                ),
              ),
            );
            return;
          }
          out.push(b);
          lines?.push(b);
        });
        child.stderr.on('data', (b: Buffer) => {
          if (errSize >= STDERR_KEEP) return;
          err.push(b);
          errSize += b.length;
        });
        child.on('close', (code, signal) =>
          finish(() => {
            lines?.end();
            const stdout = Buffer.concat(out).toString('utf8');
            if (code !== 0) {
              const stderr = Buffer.concat(err).toString('utf8');
              reject(
                new TouchFailure(
                  'TOOL_FAILED',
                  signal ? `the command was killed by ${signal}` : `the command exited with status ${code}`,
                  { status: signal ?? code, excerpt: excerpt(stderr || stdout) },
                ),
              );
              return;
            }
            const text = stdout.replace(/\r?\n$/, '');
            try {
              resolve(JSON.parse(text) as unknown);
            } catch {
              resolve(text);
            }
          }),
        );
        // A command that never reads stdin closes it early: EPIPE is not a failure of the tool.
        child.stdin.on('error', () => {});
        child.stdin.end(JSON.stringify(params));
      });
    },
  };
}
