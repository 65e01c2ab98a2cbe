import { postgresUnreachable } from '@svc/tools/postgres';
import { defineConfig } from 'vitest/config';

// CONTRACT_ENGINE=postgres needs a PostgreSQL to create its database in. Unreachable: a loud skip of the
// whole run, except under CI=true, where the run goes ahead and fails (CI must exercise both engines).
const unreachable =
  process.env.CONTRACT_TARGET === 'server' &&
  !process.env.CONTRACT_BASE_URL &&
  process.env.CONTRACT_ENGINE === 'postgres' &&
  process.env.CI !== 'true'
    ? await postgresUnreachable()
    : undefined;
if (unreachable) {
  process.stdout.write(
    `\n${'!'.repeat(100)}\nSKIPPED: the contract suite against the server on PostgreSQL: ${unreachable}\n` +
      `(set TEST_DATABASE_URL, or run with CI=true to make this a failure)\n${'!'.repeat(100)}\n\n`,
  );
}

export default defineConfig({
  test: {
    include: unreachable ? [] : ['test/**/*.test.ts'],
    // The packages-in-an-app test (slow, npm) runs once, in the default `test` task, not per server target.
    exclude: process.env.CONTRACT_TARGET
      ? ['test/installable/**', '**/node_modules/**']
      : ['**/node_modules/**'],
    passWithNoTests: Boolean(unreachable),
    globalSetup: unreachable ? [] : ['test/global-setup.ts'],
    reporters: ['default', './test/stateful-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
