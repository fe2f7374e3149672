import { defineConfig } from 'vitest/config';

const ALL = ['src/**/*.test.ts', 'test/**/*.test.ts'];
// Files that replace a module with vi.mock (node:crypto's timingSafeEqual, to see it called): a mock
// holds only in a fresh module graph, so these run isolated.
const MOCKING = ['src/ingress/sources/*/verify.test.ts'];

export default defineConfig({
  test: {
    // Drops the PostgreSQL schemas of killed runs and vacuums the catalog first (test/pg-global-setup.ts).
    globalSetup: ['test/pg-global-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores: more workers only queue behind each other and make timing-sensitive tests flaky.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        // One process per worker runs file after file, loading the project's modules once instead
        // of once per file: on 2026-12-04 the suite took 357 s instead of 489 s, module loading
        // 28 s instead of 315 s of worker time. Every test builds its own gateway, store and
        // clock, so no state is shared through the module cache.
        test: { name: 'shared', include: ALL, exclude: MOCKING, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: MOCKING, isolate: true } },
    ],
  },
});
