import { createTestDatabase, type TestDatabase } from '@svc/tools/postgres';
import { afterAll, describe, inject } from 'vitest';
import { migrateServerDatabase } from '../../src/compose/database.js';
import type { Database } from '../../src/platform/db/database.js';
import { openPglite } from '../../src/platform/db/pglite.js';
import { type ConnectionBounds, openPostgres } from '../../src/platform/db/postgres.js';

/** One engine of the test matrix. Databases opened through it are closed (and dropped) after its suite. */
export interface EngineUnderTest {
  name: 'pglite' | 'postgres';
  /** A fresh, empty database (migrated unless `migrate: false`). On PostgreSQL: a new database of its own. */
  open(options?: {
    migrate?: boolean;
    poolSize?: number;
    bounds?: Partial<ConnectionBounds>;
  }): Promise<Database>;
  /** Another handle on the same database, as a second replica would have. PostgreSQL only. */
  replica(of: Database, options?: { poolSize?: number }): Promise<Database>;
}

const probe = inject('postgres');
const ci = process.env.CI === 'true';

function describePostgresUnreachable(): string {
  return `PostgreSQL not reachable at ${probe.url} (${probe.reason})`;
}

function engine(name: EngineUnderTest['name']): { engine: EngineUnderTest; cleanup: () => Promise<void> } {
  const opened: Database[] = [];
  const created: TestDatabase[] = [];
  const urls = new WeakMap<Database, string>();
  const track = (db: Database): Database => {
    opened.push(db);
    return db;
  };
  const api: EngineUnderTest = {
    name,
    async open(options = {}) {
      if (name === 'pglite') {
        // ~3 s of WASM start-up each (more under load): suites open one and share it between tests.
        const db = track(await openPglite(undefined));
        if (options.migrate !== false) await migrateServerDatabase(db);
        return db;
      }
      if (!probe.reachable)
        throw new Error(`${describePostgresUnreachable()}; CI=true, so this fails instead of skipping`);
      const database = await createTestDatabase({ prefix: 'svc_test', adminUrl: probe.url });
      created.push(database);
      const { url } = database;
      const db = track(
        await openPostgres(url, {
          ...(options.poolSize === undefined ? {} : { max: options.poolSize }),
          ...(options.bounds === undefined ? {} : { bounds: options.bounds }),
        }),
      );
      urls.set(db, url);
      if (options.migrate !== false) await migrateServerDatabase(db);
      return db;
    },
    async replica(of, options = {}) {
      const url = urls.get(of);
      if (!url) throw new Error('replica() needs a PostgreSQL database opened by this engine');
      const db = track(
        await openPostgres(url, options.poolSize === undefined ? {} : { max: options.poolSize }),
      );
      urls.set(db, url);
      return db;
    },
  };
  const cleanup = async () => {
    await Promise.all(opened.splice(0).map((db) => db.close().catch(() => {})));
    for (const database of created.splice(0)) await database.drop();
  };
  return { engine: api, cleanup };
}

/**
 * Runs `body` once per engine, as `describe('<title> [pglite]')` and `describe('<title> [postgres]')`.
 * When PostgreSQL is unreachable its suite is skipped (the run ends with a loud count of what was
 * skipped), unless `CI=true`: then it runs and fails, because CI must exercise both engines.
 *
 * @example
 * describeEngines('migrate', (engine) => {
 *   test('applies 001', async () => expect(await migrate(await engine.open({ migrate: false }))).toEqual([1]));
 * });
 */
export function describeEngines(
  title: string,
  body: (engine: EngineUnderTest) => void,
  only?: EngineUnderTest['name'][],
): void {
  for (const name of only ?? (['pglite', 'postgres'] as const)) {
    const skip = name === 'postgres' && !probe.reachable && !ci;
    (skip ? describe.skip : describe)(`${title} [${name}]`, () => {
      const { engine: api, cleanup } = engine(name);
      afterAll(cleanup);
      body(api);
    });
  }
}

/**
 * Like {@link describeEngines}, for behaviour that needs real concurrent connections (a pool, several
 * replicas): PGlite is one connection, so it runs on PostgreSQL only.
 */
export function describePostgres(title: string, body: (engine: EngineUnderTest) => void): void {
  describeEngines(title, body, ['postgres']);
}
