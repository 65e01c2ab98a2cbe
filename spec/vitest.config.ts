import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // rules/: the Spectral ruleset's own tests; tests/: docs and other spec tests.
    include: ['rules/**/*.test.ts', 'tests/**/*.test.ts'],
    // Bundling the ruleset and linting the whole spec take seconds, not milliseconds.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
