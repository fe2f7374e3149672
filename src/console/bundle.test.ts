import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAssets } from './pages.js';
import { type ConsoleHarness, consoleHarness } from './testing.js';

/** The budget for the whole console, gzipped. */
const BUDGET_BYTES = 250 * 1024;

describe('the console bundle', () => {
  let h: ConsoleHarness;
  beforeAll(async () => {
    h = await consoleHarness('sqlite');
  });
  afterAll(() => h?.cleanup());

  it('is under 250 KB gzipped, every file it serves counted', () => {
    const assets = loadAssets();
    let total = 0;
    const sizes: Record<string, number> = {};
    for (const [name, a] of assets) {
      sizes[name] = gzipSync(a.body, { level: 9 }).byteLength;
      total += sizes[name];
    }
    process.stdout.write(`console assets, gzipped bytes: ${JSON.stringify(sizes)}; total ${total}\n`);
    expect(Object.keys(sizes).sort()).toEqual(
      ['console.css', 'console.js', 'metrics.js', 'uPlot.iife.min.js', 'uPlot.min.css', 'views.css'].sort(),
    );
    expect(total).toBeLessThan(BUDGET_BYTES);
  });

  it('serves each file with its type, unsniffable, to anyone (no secret in them)', async () => {
    for (const [name, a] of loadAssets()) {
      const res = await h.t.app.request(`/console/assets/${name}`);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect(res.headers.get('content-type')).toBe(a.type);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toBe(a.body);
    }
    expect((await h.t.app.request('/console/assets/..%2Fmodule.ts')).status).toBe(404);
  });
});
