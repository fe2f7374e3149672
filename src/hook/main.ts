import { homedir } from 'node:os';
import { runBridge } from './bridge.js';

/** The bridge as a process: argv in, stdout/stderr/exit code out. Shared by the CLI and the bundle. */
export async function runHookProcess(argv: string[]): Promise<void> {
  const [runtime = '', ...args] = argv;
  const reply = await runBridge({ runtime, args, readStdin, env: process.env, home: homedir() });
  if (reply.stdout) process.stdout.write(reply.stdout.endsWith('\n') ? reply.stdout : `${reply.stdout}\n`);
  if (reply.stderr) process.stderr.write(reply.stderr.endsWith('\n') ? reply.stderr : `${reply.stderr}\n`);
  // exitCode, not exit(): stdout to a pipe is written asynchronously and must drain first.
  process.exitCode = reply.exitCode;
}

async function readStdin(): Promise<Uint8Array> {
  // A terminal is not a hook payload; waiting on it would hang the runtime.
  if (process.stdin.isTTY) return new Uint8Array(0);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
