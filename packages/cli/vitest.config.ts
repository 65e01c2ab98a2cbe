import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The server's request log stays quiet in tests (servers started as child processes log as usual).
    env: { LOG_LEVEL: 'silent' },
    testTimeout: 30_000,
    hookTimeout: 90_000,
  },
});
