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
