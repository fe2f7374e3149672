import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** Small helpers shared by the benchmarks: percentiles, rates and aligned output. */

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[i]!;
}

export function summarize(samplesMs: number[]): { p50: number; p99: number; mean: number } {
  const s = [...samplesMs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function line(label: string, value: string, note = ''): string {
  return `  ${label.padEnd(46)} ${value.padStart(16)}  ${note}`;
}

/** Runs `fn` `n` times sequentially; returns operations per second. */
export async function rate(n: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  return n / ((performance.now() - start) / 1000);
}

/** Runs `fn` `n` times with `width` calls in flight at once; returns operations per second. */
export async function rateConcurrent(
  n: number,
  width: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: width }, lane));
  return n / ((performance.now() - start) / 1000);
}

/** Best of `rounds` runs of each, taken in turn, so drift on a shared machine hits all alike. */
export async function alternateAll(rounds: number, runs: (() => Promise<number>)[]): Promise<number[]> {
  const best = runs.map(() => 0);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < runs.length; i++) best[i] = Math.max(best[i]!, await runs[i]!());
  }
  return best;
}

/** Best of `rounds` alternating runs of a and b, so drift on a shared machine hits both alike. */
export async function alternate(
  rounds: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<[number, number]> {
  let bestA = 0;
  let bestB = 0;
  for (let r = 0; r < rounds; r++) {
    bestA = Math.max(bestA, await a());
    bestB = Math.max(bestB, await b());
  }
  return [bestA, bestB];
}

/** What a load-generator script prints: autocannon's counts, 2xx per second and latencies in ms. */
export interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  rps: number;
  p50: number;
  p90?: number;
  p99: number;
  max?: number;
}

/**
 * Runs a load-generator script (autocannon's programmatic API, written to `dir`) in a second process,
 * so it never shares the measured server's event loop; returns the JSON the script prints.
 */
export async function runLoader<T>(dir: string, source: string, args: string[]): Promise<T> {
  const script = join(dir, 'loader.cjs');
  writeFileSync(script, source);
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH, AUTOCANNON: createRequire(import.meta.url).resolve('autocannon') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${code}`);
  return JSON.parse(out) as T;
}

/** What the store and the relay have counted so far (`Db.stats()`, `Relay.stats()`), for per-request costs. */
export interface Costs {
  commits: number;
  statements: number;
  claims: number;
}

export function costs(s: {
  db: { stats?(): { commits: number; statements: number } };
  relay: { stats(): { claims: number } };
}): Costs {
  const db = s.db.stats?.() ?? { commits: 0, statements: 0 };
  return { commits: db.commits, statements: db.statements, claims: s.relay.stats().claims };
}

/** One bench line: commits, relay claims and statements per request between two `costs()` snapshots. */
export function costLine(label: string, before: Costs, after: Costs, requests: number): string {
  const per = (k: keyof Costs) => ((after[k] - before[k]) / Math.max(1, requests)).toFixed(2);
  return line(
    label,
    `${per('commits')} commits`,
    `${per('claims')} relay claims, ${per('statements')} statements per request (with the relay's work so far)`,
  );
}
