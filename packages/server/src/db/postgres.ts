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
      const result = typeof query === 'string' ? await target.query(query) : await target.query(query);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      // No parameters: pg uses the simple protocol, which runs several statements.
      await target.query(sql);
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
 * Opens a PostgreSQL pool (`pg`). Several replicas can share one database: everything that must
 * happen once (migrations, operation claims, idempotency records, jti replay) is guarded in SQL.
 *
 * @example
 * const db = await openPostgres('postgres://postgres@127.0.0.1:5432/svc', { max: 10 });
 */
export async function openPostgres(url: string, options: { max?: number } = {}): Promise<Database> {
  const max = options.max ?? 10;
  const pool = new pg.Pool({ connectionString: url, max, types });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  await pool.query('SELECT 1');
  const outer = wrap(pool);
  const listeners = new Map<string, Set<NotificationListener>>();
  const gapListeners = new Set<() => void>();
  let listenClient: Promise<pg.Client> | undefined;
  let closed = false;
  const reportGap = () => {
    for (const onGap of gapListeners) onGap();
  };

  const connectListener = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url, types });
    client.on('notification', (message) => {
      for (const listener of listeners.get(message.channel) ?? []) listener(message.payload ?? '');
    });
    client.on('error', () => {
      // Waiters also poll the database, so losing notifications only slows them; reconnect later.
      // Caches that rely on them drop what they hold now and again once the connection is back.
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
      ? pending.then((client) => client.query('SELECT 1')).then(() => {})
      : Promise.reject(new Error('not listening'));
    barrier = run.finally(() => {
      barrier = undefined;
    });
    return barrier;
  };

  return {
    engine: 'postgres',
    query: outer.query,
    exec: outer.exec,
    commitWith: outer.commitWith,
    async transaction(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
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
        throw committing ? finalError(finals, error) : error;
      } finally {
        client.release(broken);
      }
    },
    notificationBarrier() {
      if (!barrier) return runBarrier();
      nextBarrier ??= barrier
        .catch(() => {})
        .then(() => {
          nextBarrier = undefined;
          return runBarrier();
        });
      return nextBarrier;
    },
    async listen(channel, listener, options = {}) {
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
      const { onGap } = options;
      if (onGap) gapListeners.add(onGap);
      return async () => {
        set.delete(listener);
        if (onGap) gapListeners.delete(onGap);
      };
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    async close() {
      closed = true;
      const client = listenClient;
      listenClient = undefined;
      if (client) await (await client).end().catch(() => {});
      await pool.end();
    },
  };
}
