import { defineConfig } from 'vitest/config';

/**
 * The unit tier (`pnpm test:unit`): tests that need no database (not even PGlite), no Docker and no
 * browser, nor a build; a socket on loopback is fine. Listed by file, so a test lands here only on
 * purpose: everything else is the database tier or the whole system (CONTRIBUTING.md, "Tests in tiers"),
 * which `pnpm test` runs with these.
 */
export const UNIT = [
  'test/auth/password.test.ts',
  'test/auth/principal-cache.test.ts',
  'test/auth/route-security.test.ts',
  'test/config.test.ts',
  'test/data-access.test.ts',
  'test/desktops/helper.test.ts',
  'test/errors.test.ts',
  'test/files/{archive-check,heap,paths,preconditions,simulated,tar-entry,tar-read}.test.ts',
  'test/fleet/placement.test.ts',
  'test/http/*.test.ts',
  'test/ids.test.ts',
  'test/import-cycles.test.ts',
  'test/layers.test.ts',
  'test/lifecycle.test.ts',
  'test/observe/config.test.ts',
  'test/operations/docker/agent-lines.test.ts',
  'test/operations/docker/pool-demand.test.ts',
  'test/operations/output-log.test.ts',
  'test/paging.test.ts',
  'test/ratelimit-lease.test.ts',
  'test/ratelimit.test.ts',
  'test/repositories/read-cache.test.ts',
  'test/signin/redirect.test.ts',
  'test/webhooks/{outbound,samples,signing}.test.ts',
];

// As vitest.config.ts, without its probes of PostgreSQL and Docker: nothing here uses them.
export default defineConfig({
  test: {
    include: UNIT,
    env: { LOG_LEVEL: 'silent' },
    pool: 'forks',
    maxWorkers: 2,
    // One worker serves many files: a fresh one per file cost 45 of 80 s on two busy cores, and these
    // tests hold no state between files (no database, no server left running).
    isolate: false,
    testTimeout: 20_000,
  },
});
