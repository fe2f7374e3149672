import { open, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, resolve, sep } from 'node:path';

/** Runtimes whose transcript this ledger reads, and the format each writes. */
export type TranscriptDialect = 'claude-code' | 'codex';

export function transcriptDialect(runtime: string | null | undefined): TranscriptDialect | undefined {
  if (runtime === 'claude-code') return 'claude-code';
  if (runtime === 'codex') return 'codex';
  return undefined;
}

/** `~/x` → the home folder's `x`; every root is made absolute once. */
export function expandRoots(roots: readonly string[], home = homedir()): string[] {
  return roots.map((r) => resolve(r === '~' ? home : r.startsWith('~/') ? `${home}/${r.slice(2)}` : r));
}

/**
 * The real path of `path` when it is a `.jsonl` file under one of `roots` (symbolic links followed
 * first, so a link cannot lead out); undefined otherwise. A hook body names the path, so this is what
 * keeps an agent key from making the gateway open any other file.
 */
export async function allowedTranscript(
  path: unknown,
  roots: readonly string[],
): Promise<string | undefined> {
  if (typeof path !== 'string' || path === '' || !isAbsolute(path) || !path.endsWith('.jsonl'))
    return undefined;
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return undefined; // not on this machine (the agent runs elsewhere), or gone
  }
  for (const root of roots) {
    let base: string;
    try {
      base = await realpath(root);
    } catch {
      continue;
    }
    if (real.startsWith(base.endsWith(sep) ? base : base + sep)) return real;
  }
  return undefined;
}

/**
 * The complete lines appended after `offset`, at most `maxBytes` of them; `next` is where the next read
 * starts (after the last newline read, so a line still being written waits). A file shorter than
 * `offset` was replaced: it is read again from the start.
 */
export async function readFrom(
  path: string,
  offset: number,
  maxBytes: number,
): Promise<{ text: string; next: number; restarted: boolean }> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const restarted = size < offset;
    const from = restarted ? 0 : offset;
    const length = Math.min(size - from, maxBytes);
    if (length <= 0) return { text: '', next: from, restarted };
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, from);
    const end = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (end < 0) return { text: '', next: from, restarted };
    return { text: buf.subarray(0, end + 1).toString('utf8'), next: from + end + 1, restarted };
  } finally {
    await fh.close();
  }
}
