import pg from 'pg';
import type { Database, FinalStatement, NotificationListener, Queryable, QueryResult } from './database.js';
import { finalError } from './database.js';

// Both engines hand back numbers for integer columns: counts are int8, and none of ours exceed 2^53.
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (value: string) => Number.parseInt(value, 10)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

interface PgLike {
  query(query: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * Parameterised queries run as named prepared statements, so each connection parses and plans a
 * statement once instead of on every request (the hot paths: authenticate, /me, reads, list pages).
 * Names are handed out per distinct SQL text, up to a bound in case some caller inlines values.
 */
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 1000;

/**
 * A keyset page (`… LIMIT $n`) is sent unnamed, so PostgreSQL plans it for the parameters it gets. A
 * named statement switches to a generic plan after five runs, and for a page that plan can be a
 * backward scan of the primary key filtered by workspace: fine for the newest workspace, a scan past
 * every newer row for an older one (100,000 rows skipped for a page of 50 in `pnpm bench`).
 */
const PAGE = /\bLIMIT \$\d+\s*$/;

function statement(sql: string, params: readonly unknown[]): string | pg.QueryConfig {
  if (params.length === 0) return sql;
  if (PAGE.test(sql)) return { text: sql, values: [...params] };
  let name = statementNames.get(sql);
  if (name === undefined) {
    if (statementNames.size >= MAX_NAMED_STATEMENTS) return { text: sql, values: [...params] };
    name = `svc_${statementNames.size}`;
    statementNames.set(sql, name);
  }
  return { name, text: sql, values: [...params] };
}

/**
 * The `Queryable` view of the pool or of a transaction's client. `finals` is the transaction's list
 * of statements for its COMMIT; without one (the pool) `commitWith` runs the statement now.
 */
function wrap(target: PgLike, finals?: FinalStatement[]): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const query = statement(sql, params);
      const result = await (typeof query === 'string' ? target.query(query) : target.query(query)).catch(
        (error: unknown) => {
          throw connectionLost(error);
        },
      );
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      // No parameters: pg uses the simple protocol, which runs several statements.
      await target.query(sql).catch((error: unknown) => {
        throw connectionLost(error);
      });
    },
    async commitWith(final: FinalStatement): Promise<void> {
      if (finals) {
        finals.push(final);
        return;
      }
      try {
        await target.query(final.sql);
      } catch (error) {
        throw finalError([final], error);
      }
    },
  };
}

/**
 * The bounds on every wait of a connection (design: nothing waits forever). Each pooled connection
 * carries the three PostgreSQL timeouts from its start-up message, so they cost no round trip; a
 * statement that needs longer (a migration) lifts them with `SET LOCAL` in its own transaction.
 */
export interface ConnectionBounds {
  /** Waiting for a free connection of the pool; then `PoolTimeoutError` (503 `unavailable`). */
  checkoutTimeoutMs: number;
  /** `statement_timeout`: one statement's run (57014, 503). */
  statementTimeoutMs: number;
  /** `lock_timeout`: one wait for a row or table lock (55P03, 503). */
  lockTimeoutMs: number;
  /** `idle_in_transaction_session_timeout`: a transaction left waiting on this process (25P03). */
  idleInTransactionTimeoutMs: number;
}

/** The bounds as shipped; the runbook lists them with their environment variables. */
export const DEFAULT_CONNECTION_BOUNDS: Readonly<ConnectionBounds> = Object.freeze({
  checkoutTimeoutMs: 2000,
  statementTimeoutMs: 10_000,
  lockTimeoutMs: 3000,
  idleInTransactionTimeoutMs: 10_000,
});

/** `application_name` of the connection that listens for notifications (`pg_stat_activity`). */
export const LISTEN_APPLICATION_NAME = 'svc-listen';

/** How long a notification barrier may take before it counts as "not listening". */
const BARRIER_TIMEOUT_MS = 2000;

/**
 * No connection of the pool came free within `checkoutTimeoutMs`: the replica is saturated, and the
 * request is answered 503 `unavailable` with `Retry-After` rather than queued without end.
 */
export class PoolTimeoutError extends Error {
  override name = 'PoolTimeoutError';
  readonly code = 'svc_pool_timeout';
}

// pg-pool's only signal for a checkout that timed out is this message.
const CHECKOUT_TIMED_OUT = 'timeout exceeded when trying to connect';

/**
 * pg's own errors for a connection that ended under a statement carry no SQLSTATE (`Connection
 * terminated unexpectedly`, `… is not queryable`): given 08006 (connection_failure), so the API answers
 * them as what they are, a database briefly away (503 with Retry-After), not a 500.
 */
function connectionLost(error: unknown): unknown {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== undefined) return error;
  if (!/^Connection terminated|is not queryable/.test(error.message)) return error;
  return Object.assign(new Error(`the database connection was lost: ${error.message}`, { cause: error }), {
    code: '08006',
  });
}

function checkedOut(error: unknown): unknown {
  return error instanceof Error && error.message === CHECKOUT_TIMED_OUT
    ? new PoolTimeoutError(`no database connection came free in time`, { cause: error })
    : error;
}

/** `promise`, or a rejection once `ms` have passed without it settling. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Opens a PostgreSQL pool (`pg`). Several replicas can share one database: everything that must
 * happen once (migrations, operation claims, idempotency records, jti replay) is guarded in SQL.
 * Requests and background work (the worker, housekeeping, the reconciler: {@link Database.background})
 * have pools of their own, so neither can starve the other; `LISTEN` has a connection of its own.
 *
 * @example
 * const db = await openPostgres('postgres://postgres@127.0.0.1:5432/svc', { max: 10 });
 */
export async function openPostgres(
  url: string,
  options: { max?: number; backgroundMax?: number; bounds?: Partial<ConnectionBounds> } = {},
): Promise<Database> {
  const max = options.max ?? 10;
  const bounds = { ...DEFAULT_CONNECTION_BOUNDS, ...options.bounds };
  const newPool = (size: number) => {
    const created = new pg.Pool({
      connectionString: url,
      max: size,
      types,
      connectionTimeoutMillis: bounds.checkoutTimeoutMs,
      statement_timeout: bounds.statementTimeoutMs,
      lock_timeout: bounds.lockTimeoutMs,
      idle_in_transaction_session_timeout: bounds.idleInTransactionTimeoutMs,
    });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    created.on('error', () => {});
    // pg-pool hands a new client out with no 'error' listener of its own until its taker adds one (a
    // microtask later for `await pool.connect()`): an ErrorResponse read in the same chunk as the
    // connection's first ReadyForQuery (a server shutting down as it accepts, 57P01) would be emitted to
    // nobody and end the process (seen under a restart, one run in about ten). The error still fails
    // the statement that meets the client, or the transaction that holds it (`lost` below).
    created.on('connect', (client) => client.on('error', () => {}));
    return created;
  };
  const pool = newPool(max);
  await pool.query('SELECT 1');
  // Opened on first use: only a replica that runs the worker needs it.
  let backgroundPool: pg.Pool | undefined;
  const listeners = new Map<string, Set<NotificationListener>>();
  const gapListeners = new Set<() => void>();
  let listenClient: Promise<pg.Client> | undefined;
  let closed = false;
  const reportGap = () => {
    for (const onGap of gapListeners) onGap();
  };

  /** Listening connections already given up: their late errors change nothing. */
  const givenUp = new WeakSet<pg.Client>();
  // Waiters also poll the database, so losing notifications only slows them; reconnect later.
  // Caches that rely on them drop what they hold now and again once the connection is back.
  const lostListener = () => {
    listenClient = undefined;
    reportGap();
    if (!closed && listeners.size > 0) {
      setTimeout(() => {
        if (closed || listenClient) return;
        listenClient = connectListener();
        listenClient.then(reportGap, () => {
          listenClient = undefined;
        });
      }, 1000).unref();
    }
  };

  const connectListener = async (): Promise<pg.Client> => {
    const client = new pg.Client({
      connectionString: url,
      types,
      connectionTimeoutMillis: bounds.checkoutTimeoutMs,
      // Named, so an operator (and a test) can tell it from the pools' connections.
      application_name: LISTEN_APPLICATION_NAME,
    });
    client.on('notification', (message) => {
      for (const listener of listeners.get(message.channel) ?? []) listener(message.payload ?? '');
    });
    client.on('error', () => {
      if (givenUp.has(client)) return;
      givenUp.add(client);
      lostListener();
    });
    await client.connect();
    for (const channel of listeners.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    return client;
  };

  // A `SELECT 1` on the listening connection: PostgreSQL sends the notifications it has queued for
  // this session before the query's ReadyForQuery, so they reach the listeners before it resolves.
  // Concurrent callers share one; a caller arriving while one runs waits for the next.
  let barrier: Promise<void> | undefined;
  let nextBarrier: Promise<void> | undefined;
  const runBarrier = (): Promise<void> => {
    const pending = listenClient;
    const run = pending
      ? within(
          pending.then((client) => client.query('SELECT 1')).then(() => {}),
          BARRIER_TIMEOUT_MS,
        ).catch((error: unknown) => {
          // A listening connection that does not answer in time is given up: what it would have
          // delivered may be lost, so the caches hear of a gap, and a new connection is made.
          if (listenClient === pending) {
            lostListener();
            pending
              .then((client) => {
                givenUp.add(client);
                return client.end();
              })
              .catch(() => {});
          }
          throw error;
        })
      : Promise.reject(new Error('not listening'));
    barrier = run.finally(() => {
      barrier = undefined;
    });
    return barrier;
  };

  const view = (target: pg.Pool, background: () => Database): Database => {
    const outer = wrap(bounded(target));
    return {
      engine: 'postgres',
      query: outer.query,
      exec: outer.exec,
      commitWith: outer.commitWith,
      transaction: (fn) => transaction(target, fn),
      notificationBarrier,
      listen,
      background,
      poolStats: () => ({
        total: target.totalCount,
        idle: target.idleCount,
        waiting: target.waitingCount,
        max: target.options.max,
      }),
      close,
    };
  };

  const transaction = async <T>(target: pg.Pool, fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const client = await target.connect().catch((error: unknown) => {
      throw connectionLost(checkedOut(error));
    });
    let broken: Error | undefined;
    // While checked out, a client is no longer heard by the pool: a connection the server ends between
    // two statements of this transaction (a restart, an admin's terminate) would raise an 'error'
    // nobody listens to, which ends the process. Heard here, it fails the next statement instead, and
    // the client is destroyed on release.
    let lostWith: Error | undefined;
    const lost = (error: Error) => {
      lostWith ??= error;
      broken ??= error;
    };
    client.on('error', lost);
    const finals: FinalStatement[] = [];
    let committing = false;
    try {
      await client.query('BEGIN');
      const result = await fn(wrap(client, finals));
      // The final statements and the COMMIT in one simple-protocol message: PostgreSQL runs them in
      // order and stops at the first error, so a refusal leaves the transaction aborted, uncommitted.
      committing = true;
      await client.query([...finals.map((final) => final.sql), 'COMMIT'].join(';\n'));
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      // A statement after the connection was lost fails with pg's own "not queryable": the loss
      // itself (57P01, ECONNRESET) is what happened, and what the API answers by (503).
      const cause = connectionLost(lostWith ?? error);
      throw committing ? finalError(finals, cause) : cause;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  };

  const notificationBarrier = (): Promise<void> => {
    if (!barrier) return runBarrier();
    nextBarrier ??= barrier
      .catch(() => {})
      .then(() => {
        nextBarrier = undefined;
        return runBarrier();
      });
    return nextBarrier;
  };

  const listen: Database['listen'] = async (channel, listener, listenOptions = {}) => {
    listenClient ??= connectListener();
    let client: pg.Client;
    try {
      client = await listenClient;
    } catch (error) {
      listenClient = undefined;
      throw error;
    }
    let set = listeners.get(channel);
    if (!set) {
      set = new Set();
      listeners.set(channel, set);
      // Registered first: a reconnect in between re-LISTENs every channel in the map.
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    }
    set.add(listener);
    const { onGap } = listenOptions;
    if (onGap) gapListeners.add(onGap);
    return async () => {
      set.delete(listener);
      if (onGap) gapListeners.delete(onGap);
    };
  };

  const close = async (): Promise<void> => {
    closed = true;
    const client = listenClient;
    listenClient = undefined;
    if (client) await (await client).end().catch(() => {});
    await Promise.all([pool.end(), backgroundPool?.end()]);
  };

  let backgroundView: Database | undefined;
  const background = (): Database => {
    backgroundPool ??= newPool(options.backgroundMax ?? 2);
    backgroundView ??= view(backgroundPool, background);
    return backgroundView;
  };
  return view(pool, background);
}

/** The pool's `query`, with a checkout that timed out answered as {@link PoolTimeoutError}. */
function bounded(pool: pg.Pool): PgLike {
  return {
    query: (query: string | pg.QueryConfig, params?: unknown[]) =>
      (typeof query === 'string' ? pool.query(query, params) : pool.query(query)).catch((error: unknown) => {
        throw checkedOut(error);
      }),
  };
}
