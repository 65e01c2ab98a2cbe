import type { Database, Queryable } from './database.js';

/**
 * A `Database` view of an open transaction: its `transaction(fn)` runs `fn` in the same transaction
 * (no savepoint), so code written for a `Database` (the token grants) can run inside a request's
 * transaction and commit with its idempotency record. `listen`, `notificationBarrier` and `close` are not available.
 *
 * @example
 * await db.transaction(async (tx) => verifyAssertion(nestedDatabase(tx, db.engine), assertion, options));
 */
export function nestedDatabase(tx: Queryable, engine: Database['engine']): Database {
  const view: Database = {
    engine,
    query: (sql, params) => tx.query(sql, params),
    exec: (sql) => tx.exec(sql),
    // The enclosing transaction's: the statement runs with its COMMIT.
    commitWith: (statement) => tx.commitWith(statement),
    transaction: (fn) => fn(tx),
    listen: () => Promise.reject(new Error('LISTEN is not available inside a transaction')),
    notificationBarrier: () => Promise.reject(new Error('not available inside a transaction')),
    background: () => view,
    close: async () => {},
  };
  return view;
}
