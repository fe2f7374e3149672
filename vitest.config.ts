import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Drops the PostgreSQL schemas of killed runs and vacuums the catalog first (test/pg-global-setup.ts).
    globalSetup: ['test/pg-global-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores: more workers only queue behind each other and make timing-sensitive tests flaky.
    maxWorkers: 3,
  },
});
