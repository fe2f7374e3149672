import { constants, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * An idle gateway should not hold a busy one's young generation. V8 starts the new space at 1 MB
 * per semi-space and doubles it (`--semi-space-growth-factor`, default 2) whenever a scavenge finds
 * much surviving, up to 16 MB: loading ~900 module files at start grows it to its maximum, and
 * nothing shrinks it again in a process that then waits for requests, so an idle `serve` kept
 * ~32 MB of new space it did not use (docs/benchmarks.md). `serve` therefore starts with the growth
 * factor at 1 and hands V8 its default back as soon as allocation shows real load, so a busy
 * gateway gets exactly V8's usual young generation.
 *
 * An operator who sets any semi-space flag (`node --max-semi-space-size=…`, `NODE_OPTIONS`) is
 * left alone.
 */

/** V8's own default for `--semi-space-growth-factor`. */
const V8_GROWTH_FACTOR = 2;
/** Scavenges within one second that count as load: with 1 MB semi-spaces, ≳ 20 MB/s allocated. */
export const BUSY_SCAVENGES_PER_SECOND = 20;

/** Whether the operator set a V8 flag matching `flag` (argv or `NODE_OPTIONS`): such a flag is left alone. */
function operatorChose(flag: RegExp): boolean {
  return flag.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);
}

function operatorChoseSemiSpace(): boolean {
  return operatorChose(/semi[-_]space/);
}

/** Call first thing in `serve`, before the modules load: keeps the young generation at its start size. */
export function startLean(): boolean {
  startUnoptimized();
  if (operatorChoseSemiSpace()) return false;
  setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}

/**
 * Start-up code runs once, yet loading ~900 files and building every schema calls enough of it
 * (zod, yaml, the migration runner) for V8 to optimize it with TurboFan on its background threads,
 * whose compilation zones stay in those threads' malloc arenas: an idle `serve` held ~7 MB more
 * with it than under `--no-opt` (docs/ARCHITECTURE.md "Idle memory"). So `serve` starts with
 * TurboFan off and turns it on at ready (`optimizeFromNowOn`), when the code that runs is the code
 * that serves; an operator's own `--opt`, `--no-opt`, `--turbofan` or `--jitless` is left alone.
 */
function startUnoptimized(): void {
  if (operatorChoseTiering()) return;
  setFlagsFromString('--no-opt');
  unoptimized = true;
}

let unoptimized = false;

function operatorChoseTiering(): boolean {
  return operatorChose(/--(no[-_])?(opt|turbofan)\b|--jitless/);
}

/** Call once the gateway is ready: V8 optimizes hot code again from here on (a no-op unless `startLean` held it). */
export function optimizeFromNowOn(): void {
  if (!unoptimized) return;
  setFlagsFromString('--opt');
  unoptimized = false;
}

/**
 * Watches scavenges once the gateway is ready; the first second with `busyPerSecond` of them gives V8
 * its growth factor back (for good: a process that was busy once is one that gets traffic) and stops
 * watching. Returns a stop function.
 */
export function growWhenBusy(
  opts: { busyPerSecond?: number; onGrow?: () => void; now?: () => number } = {},
): () => void {
  const busy = opts.busyPerSecond ?? BUSY_SCAVENGES_PER_SECOND;
  const now = opts.now ?? (() => performance.now());
  let windowStart = now();
  let count = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_MINOR) continue;
      const t = now();
      if (t - windowStart > 1000) {
        windowStart = t;
        count = 0;
      }
      if (++count < busy) continue;
      setFlagsFromString(`--semi-space-growth-factor=${V8_GROWTH_FACTOR}`);
      observer.disconnect();
      opts.onGrow?.();
      return;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

/**
 * One full, compacting collection once the gateway is ready. Start-up leaves several MB of dead
 * objects in the old space (config parsing, migrations, schema building: ~31 MB committed, ~23 MB
 * live), and an idle process allocates too little ever to reach the limit that would collect them.
 * A plain full GC frees the dead objects but leaves the live ones spread over the same pages, so the
 * space stays committed; with `--compact-on-every-full-gc` for this one collection V8 moves the live
 * objects together and releases the emptied pages (old space 31.0 → 23.2 MB committed). Measured: idle
 * RSS 89.2 → 81.4 MB, the collection 30 → 50–110 ms (docs/ARCHITECTURE.md "Idle memory"); more
 * collections gave nothing more. The flag is V8's default (off) again right after, so a busy gateway
 * collects as V8 usually does. `gc` is reached through a throwaway context, so the process's own
 * global never gets it.
 */
export function collectStartupGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  if (operatorChose(/compact[-_]on[-_]every[-_]full[-_]gc/)) {
    gc();
    return;
  }
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
