import { testDatabaseUrl } from '@svc/tools/postgres';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one loud line when PostgreSQL tests were skipped because the server was not reachable, so a
 * green run never hides that half of the engine matrix did not run.
 */
export default class PostgresSkipReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]): void {
    // Tests skipped by a filter (-t, .skip) are not news; only an unreachable server is.
    if (!process.env.SVC_TEST_POSTGRES_UNREACHABLE) return;
    let skipped = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        if (test.fullName.includes('[postgres]') && test.result().state === 'skipped') skipped += 1;
      }
    }
    const url = testDatabaseUrl();
    if (skipped > 0) {
      const line = '!'.repeat(100);
      console.warn(
        `\n${line}\nPostgreSQL not reachable at ${url}: skipping ${skipped} PostgreSQL tests (set CI=true to fail instead)\n${line}\n`,
      );
    }
  }
}
