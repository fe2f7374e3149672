import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { configSpec, parseConfig } from '../../src/server/config.js';
import { allModules } from '../../src/server/modules.js';
import { auth, type TestApp, testApp } from '../../src/server/testing.js';
import { dialects } from '../../src/store/testing.js';
import { sampleModule } from '../fixtures/sample-module/index.js';

/**
 * A new module is one folder: test/fixtures/sample-module holds a manifest with its own config key, a
 * migration per dialect, a route and a worker, and nothing outside that folder names it except the
 * module list it is added to here (in the app, one line of src/server/modules.ts).
 */

function problems(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const DIALECTS = await dialects();

describe('a module added as one folder', () => {
  it('has its config section validated by its own schema, strictly', () => {
    const spec = configSpec([...allModules(), sampleModule()]);
    expect(parseConfig({ sample: { greeting: 'hi' } }, 'test', spec).sample).toEqual({
      greeting: 'hi',
      tick_ms: 20,
    });
    expect(problems(() => parseConfig({ sample: { colour: 'red' } }, 'test', spec))).toEqual([
      { path: 'sample.colour', message: expect.stringContaining('unknown key') },
    ]);
    expect(problems(() => parseConfig({ sample: { greeting: '' } }, 'test', spec))[0]?.path).toBe(
      'sample.greeting',
    );
    // Without the module in the list, its key is like any other misspelt key.
    expect(problems(() => parseConfig({ sample: {} }, 'test'))).toEqual([
      { path: 'sample', message: expect.stringContaining('unknown key') },
    ]);
  });

  describe.each(DIALECTS)('on %s', (dialect) => {
    let t: TestApp | undefined;
    afterEach(async () => {
      await t?.cleanup();
      t = undefined;
    });

    it('gets its table, answers its route and runs its worker until shutdown', async () => {
      const sample = sampleModule();
      t = await testApp({
        dialect,
        modules: [...allModules(), sample],
        config: { sample: { greeting: 'hello from a folder', tick_ms: 5 } },
      });
      expect(t.kernel.workers().map((w) => w.name)).toContain('sample.greeter');
      for (let i = 0; i < 200 && sample.state.ticks < 3; i++) await new Promise((r) => setTimeout(r, 10));
      const res = await t.app.request('/v1/sample', { headers: auth('admin') });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { greeting: string; stored: number; ticks: number };
      expect(body.greeting).toBe('hello from a folder');
      expect(body.stored).toBeGreaterThanOrEqual(3);

      const services = t.services;
      await t.kernel.stop();
      const after = sample.state.ticks;
      await new Promise((r) => setTimeout(r, 60));
      expect(sample.state.ticks).toBe(after);
      expect(t.kernel.workers()).toEqual([]);
      const rows = await services.db.query<{ n: number }>({
        text: 'SELECT COUNT(*) AS n FROM sample_greetings',
      });
      expect(Number(rows[0]!.n)).toBe(after);
    });
  });
});
