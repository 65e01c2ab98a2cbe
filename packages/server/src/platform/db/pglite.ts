import { PGlite } from '@electric-sql/pglite';
import { secureDataDir, tightenDataDir } from './data-dir.js';
import type { Database, FinalStatement, Queryable, QueryResult } from './database.js';
import { finalError } from './database.js';

interface PgliteLike {
  query<Row>(
    sql: string,
    params?: unknown[],
  ): Promise<{ rows: Row[]; affectedRows?: number; command?: string }>;
  exec(sql: string): Promise<unknown>;
}

const CHANGES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * The `Queryable` view of PGlite or of an open transaction. `finals` is the transaction's list of
 * statements for its end; without one `commitWith` runs the statement now.
 */
function wrap(target: PgliteLike, finals?: FinalStatement[]): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query<Row>(sql, params as unknown[]);
      const changed = result.command !== undefined && CHANGES.has(result.command);
      return { rows: result.rows, rowCount: changed ? (result.affectedRows ?? 0) : result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
    async commitWith(final: FinalStatement): Promise<void> {
      if (finals) {
        finals.push(final);
        return;
      }
      await runFinal(target, final);
    },
  };
}

async function runFinal(target: PgliteLike, final: FinalStatement): Promise<void> {
  try {
    await target.query(final.sql);
  } catch (error) {
    throw finalError([final], error);
  }
}

/**
 * Opens PGlite (PostgreSQL compiled to WASM, in this process): files under `dataDir`, or in memory
 * when `dataDir` is undefined. One connection: statements run one at a time, and a transaction holds
 * the database until it ends. Start-up takes a few seconds (WASM), so tests open one per file.
 * The data directory is made private first ({@link secureDataDir}: refused when others can read or
 * write it; the process umask becomes 077).
 *
 * @example
 * const db = await openPglite(undefined); // in memory
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  if (!dataDir) return wrapPglite(await PGlite.create({}));
  secureDataDir(dataDir);
  const db = wrapPglite(await PGlite.create({ dataDir }));
  tightenDataDir(dataDir);
  return {
    ...db,
    async close() {
      await db.close();
      tightenDataDir(dataDir);
    },
  };
}

/**
 * The `Database` view of an open PGlite instance (tests clone a migrated template and wrap the clone).
 *
 * @example
 * const db = wrapPglite(await PGlite.create());
 */
function wrapPglite(pg: PGlite): Database {
  const outer = wrap(pg);
  const db: Database = {
    engine: 'pglite',
    query: outer.query,
    exec: outer.exec,
    commitWith: outer.commitWith,
    // One connection in this process: the final statements run after `fn`, then PGlite commits
    // (there is no round trip to save); a throw rolls everything back.
    transaction: (fn) =>
      pg.transaction(async (tx) => {
        const finals: FinalStatement[] = [];
        const result = await fn(wrap(tx, finals));
        for (const final of finals) await runFinal(tx, final);
        return result;
      }),
    // One connection in this process: nothing is lost, and a commit's notifications reach the
    // listeners before the commit resolves.
    listen: async (channel, listener) => {
      const unsubscribe = await pg.listen(channel, listener);
      return async () => unsubscribe();
    },
    notificationBarrier: async () => {},
    // One connection in this process: there is no other pool to give background work.
    background: () => db,
    close: () => pg.close(),
  };
  return db;
}
