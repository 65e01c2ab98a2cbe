import pg from 'pg';

/** What every engine returns from a query, normalised (pg and PGlite differ in the details). */
export interface QueryResult<Row> {
  rows: Row[];
  /** Rows returned by a SELECT, or rows changed by INSERT/UPDATE/DELETE. */
  rowCount: number;
}

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /**
   * One statement with `$1…` parameters. Types come back the same on both engines: `timestamptz` as
   * `Date`, `jsonb` as parsed JSON, `int4`/`int8` as `number`, `text` as `string`.
   */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `statement` as the transaction's last statement, after everything else the transaction
   * does: resolves at once, and the statement runs when the transaction commits. On PostgreSQL it
   * travels in one message with the COMMIT (simple query protocol, hence no parameters), so a row
   * lock it takes is held for its execution and the commit only, with no round trip to this process
   * in between; when it fails PostgreSQL skips the COMMIT and the transaction rolls back. Outside a
   * transaction it runs now. Either way its error goes through `statement.refused`.
   *
   * @example
   * await tx.commitWith({ sql: `SELECT svc_take_computer_place(${sqlLiteral(id)}, 10)`, refused: mapError });
   */
  commitWith(statement: FinalStatement): Promise<void>;
}

/**
 * A statement sent with a transaction's COMMIT ({@link Queryable.commitWith}). One statement, no
 * parameters: values are inlined, text only through {@link sqlLiteral}, numbers checked as integers.
 */
export interface FinalStatement {
  sql: string;
  /**
   * What to throw instead of the statement's error (e.g. an ApiError for a refusal it RAISEd), or
   * `undefined` to throw the error as it is (a failed COMMIT, a lost connection).
   */
  refused?: (error: unknown) => Error | undefined;
}

/**
 * The error to throw when a transaction's final statements (or its COMMIT) failed: the first
 * translation one of them offers, else the error itself.
 *
 * @example
 * throw finalError(statements, error);
 */
export function finalError(statements: readonly FinalStatement[], error: unknown): unknown {
  for (const statement of statements) {
    const translated = statement.refused?.(error);
    if (translated) return translated;
  }
  return error;
}

/**
 * `value` as a quoted SQL string literal, for the one place SQL is sent without parameters
 * ({@link FinalStatement}): doubled quotes, and backslashes in an `E''` literal, as `pg` escapes them.
 *
 * @example
 * sqlLiteral("it's"); // 'it''s'
 */
export function sqlLiteral(value: string): string {
  return pg.escapeLiteral(value);
}

/** Called with the payload of a `NOTIFY` on a channel this process listens to. */
export type NotificationListener = (payload: string) => void;

/**
 * The one database interface of the server. Two engines implement it: PGlite (embedded, one
 * connection, for local use, sandbox and tests) and PostgreSQL through a `pg` pool (replicas).
 * Both run the same SQL and the same migrations.
 *
 * @example
 * const db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
 * const { rows } = await db.query<{ n: number }>('SELECT 1 AS n');
 * await db.transaction(async (tx) => {
 *   await tx.query('UPDATE computers SET name = $1 WHERE id = $2', ['web-2', id]);
 * });
 * await db.close();
 */
export interface Database extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /**
   * Runs `fn` in a transaction on one connection: committed when `fn` resolves, rolled back when it
   * throws (the error is rethrown). Do not use `this` inside `fn`, only `tx`: on PGlite the outer
   * handle waits for the transaction to end, so using it inside would deadlock. What `fn` hands to
   * `tx.commitWith` runs last, with the COMMIT.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Subscribes to `NOTIFY channel`; resolves to an unsubscribe function. `onGap` is called when
   * notifications may have been lost (PostgreSQL: the listening connection dropped and came back).
   */
  listen(
    channel: string,
    listener: NotificationListener,
    options?: { onGap?: () => void },
  ): Promise<() => Promise<void>>;
  /**
   * Resolves once every notification committed before the call has reached this process's
   * listeners (PostgreSQL: one round trip on the listening connection, shared by concurrent callers;
   * PGlite delivers them with the commit, so at once). Rejects when the listening connection is down.
   */
  notificationBarrier(): Promise<void>;
  /**
   * The handle for work beside requests (the operation worker, housekeeping, the reconciler): on
   * PostgreSQL a small pool of its own, so a flood of requests cannot starve the worker of
   * connections nor the worker starve requests; notifications are shared. PGlite: itself.
   */
  background(): Database;
  close(): Promise<void>;
  /** The connection pool's use now (PostgreSQL only; PGlite has one embedded connection). */
  poolStats?(): PoolStats;
}

/** A connection pool's use at one moment (a metrics gauge). */
export interface PoolStats {
  /** Open connections, idle or in use. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** The pool's size. */
  max: number;
}
