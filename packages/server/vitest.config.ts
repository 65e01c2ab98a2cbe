import { defineConfig } from 'vitest/config';

// Forks, not threads: PGlite (WASM) and pg pools hold native handles that are happier in their own
// process. Two cores, so two files at once; PGlite start-up (~3 s) dominates each file that uses it.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The server's request log stays quiet in tests (servers started as child processes log as usual).
    env: { LOG_LEVEL: 'silent' },
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/postgres-skip-reporter.ts'],
  },
});
