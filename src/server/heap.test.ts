import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { requireBuild, ROOT } from '../cli/testing.js';

/**
 * The young-generation policy of `serve` (heap.ts), in a child process each: V8 flags are
 * process-wide, so the test's own worker is never touched.
 */

const HEAP = `${ROOT}dist/server/heap.js`;

/** Runs `body` in a fresh node with heap.js imported as `h`; prints the new space's size in MB. */
function child(
  body: string,
  args: string[] = [],
): { lean: boolean; before: number; after: number; grew: boolean } {
  const script = `
import v8 from 'node:v8';
const h = await import(${JSON.stringify(HEAP)});
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size / 2 ** 20;
const churn = (n) => { let keep = []; for (let i = 0; i < n; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 5000) keep = []; } };
const out = { grew: false };
${body}
process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(
    execFileSync(process.execPath, [...args, '--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

describe('serve keeps the young generation lean until it is busy', () => {
  requireBuild();

  it('start-up allocation does not grow the new space once startLean ran', () => {
    const r = child('out.lean = h.startLean(); churn(2e6); out.before = newSpace(); out.after = out.before;');
    expect(r.lean).toBe(true);
    expect(r.before).toBeLessThan(4);
  });

  it('without it, the same allocation grows the new space (the cost the policy removes)', () => {
    const r = child('out.lean = false; churn(2e6); out.before = newSpace(); out.after = out.before;');
    expect(r.before).toBeGreaterThan(8);
  });

  it('load gives V8 its growth factor back, and the new space grows as it does by default', () => {
    const r = child(`
out.lean = h.startLean();
const stop = h.growWhenBusy({ onGrow: () => { out.grew = true; } });
churn(2e5); out.before = newSpace();
await new Promise((r) => setTimeout(r, 50)); // gc entries are delivered asynchronously
for (let i = 0; i < 20 && !out.grew; i++) { churn(1e6); await new Promise((r) => setTimeout(r, 10)); }
churn(3e6); out.after = newSpace(); stop();`);
    expect(r.before).toBeLessThan(4);
    expect(r.grew).toBe(true);
    expect(r.after).toBeGreaterThan(8);
  });

  it('an operator who chose a semi-space size is left alone', () => {
    const r = child('out.lean = h.startLean(); out.before = 0; out.after = 0;', ['--max-semi-space-size=8']);
    expect(r.lean).toBe(false);
  });
});

describe('serve optimizes nothing until it is ready', () => {
  requireBuild();

  /** Runs a hot function in a fresh node after `setup`, and again after `ready`; says whether TurboFan took it each time. */
  const tiering = (setup: string, ready: string, args: string[] = []) => {
    const script = `
const h = await import(${JSON.stringify(HEAP)});
const hot = () => { const f = new Function('x', 'let s = 0; for (let i = 0; i < 1000; i++) s += (x * i) % 7; return s;'); for (let i = 0; i < 2e5; i++) f(i); return (%GetOptimizationStatus(f) & 16) !== 0; };
${setup}
const atStart = hot();
${ready}
await new Promise((r) => setTimeout(r, 100));
process.stdout.write(JSON.stringify({ atStart, afterReady: hot() }));`;
    return JSON.parse(
      execFileSync(
        process.execPath,
        ['--allow-natives-syntax', ...args, '--input-type=module', '-e', script],
        {
          encoding: 'utf8',
        },
      ),
    ) as { atStart: boolean; afterReady: boolean };
  };

  it('start-up code is not optimized, and hot code is again once the gateway is ready', () => {
    expect(tiering('h.startLean();', 'h.optimizeFromNowOn();')).toEqual({ atStart: false, afterReady: true });
  });

  it('without the policy the same code is optimized at once (what start-up paid for)', () => {
    expect(tiering('', '').atStart).toBe(true);
  });

  // Under --no-opt the hot loop runs unoptimized: 6.8 s here, too near the default 20 s timeout on a
  // machine twice as slow.
  it("an operator's own tiering flag is left alone", () => {
    expect(tiering('h.startLean();', 'h.optimizeFromNowOn();', ['--no-opt'])).toEqual({
      atStart: false,
      afterReady: false,
    });
  }, 60_000);
});

describe('serve collects start-up garbage once it is ready', () => {
  requireBuild();

  it("frees what start-up left behind, without giving the process's global a gc", () => {
    const script = `
import v8 from 'node:v8';
const h = await import(${JSON.stringify(HEAP)});
const old = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size / 2 ** 20;
let junk = []; for (let i = 0; i < 3e5; i++) junk.push({ i, s: 'x' + i }); junk = undefined;
const before = old();
h.collectStartupGarbage();
process.stdout.write(JSON.stringify({ before, after: old(), gc: typeof globalThis.gc }));`;
    const r = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as { before: number; after: number; gc: string };
    expect(r.gc).toBe('undefined');
    expect(r.after).toBeLessThan(r.before - 5);
  });

  it('compacts: the pages that held only dead objects go back, which a plain full GC keeps', () => {
    // Two of every three objects survive: each page stays ~2/3 full, too full for V8's own choice of
    // pages to evacuate, so a second plain full GC keeps every page (measured: 37.5 → 37.5 MB).
    const script = `
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
const h = await import(${JSON.stringify(HEAP)});
const committed = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size / 2 ** 20;
let all = []; for (let i = 0; i < 6e5; i++) all.push({ i, s: 'x' + i });
const kept = all.filter((_, i) => i % 3 !== 0); all = undefined;
v8.setFlagsFromString('--expose-gc'); runInNewContext('gc')();
const swept = committed();
h.collectStartupGarbage();
process.stdout.write(JSON.stringify({ swept, compacted: committed(), kept: kept.length }));`;
    const r = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as { swept: number; compacted: number };
    expect(r.compacted).toBeLessThan(r.swept - 5);
  });
});
