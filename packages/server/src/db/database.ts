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
   * handle waits for the transaction to end, so using it inside would deadlock.
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
