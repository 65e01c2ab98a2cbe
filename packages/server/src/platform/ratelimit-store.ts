import { createHash } from 'node:crypto';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { Database } from './db/database.js';
import type { Counter } from './ratelimit-counter.js';
import { leased } from './ratelimit-lease.js';

/** One counter: `points` per `durationSeconds`, fixed windows that start with a key's first point. */
export interface CounterOptions {
  /** Unique per policy; prefixes every key in the store. */
  name: string;
  points: number;
  durationSeconds: number;
  /**
   * Take points from a shared store in blocks and spend them in this process ({@link leased}): one
   * statement per block instead of per request, never more than the budget, at the price of refusing
   * a little early when several replicas hold blocks. For the API's rate limits, not sign-in throttles.
   */
  lease?: boolean;
}

/** Makes counters: where they live is chosen once per app by {@link counterStore}. */
export type CounterStore = (options: CounterOptions) => Counter;

/** Keys stay well inside the table's 255 characters: long ones (emails, addresses) are hashed. */
function storeKey(key: string): string {
  return key.length <= 160 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * The counters of every rate limit and throttle. On PostgreSQL they live in the `rate_limits` table
 * (RateLimiterPostgres: an atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` per consume), so all
 * replicas on one database share one budget. On PGlite (one process owns the database) they live in
 * memory (RateLimiterMemory), with the same semantics.
 *
 * @example
 * const counters = counterStore(db);
 * const perAddress = counters({ name: 'signin_address', points: 30, durationSeconds: 60 });
 * const state = await perAddress.consume('127.0.0.1');
 */
export function counterStore(db: Database): CounterStore {
  if (db.engine !== 'postgres') return memoryCounters;
  // RateLimiterPostgres talks to a `pg`-like client; our Database is one (named statements included).
  const client = {
    query: (q: { text: string; values?: unknown[] }) => db.query(q.text, q.values ?? []),
  };
  return (options) => {
    const shared = counter(
      new RateLimiterPostgres({
        ...limits(options),
        storeClient: client,
        storeType: 'pool',
        tableName: 'rate_limits',
        // Created by migration 004, unlogged since 011 (no WAL flush per request); expired rows are
        // swept by the library every 5 minutes.
        tableCreated: true,
        // While PostgreSQL does not answer, count in memory (per replica) rather than fail every
        // request: GET /health must still answer 503, and nothing else works without the database.
        insuranceLimiter: new RateLimiterMemory(limits(options)),
      }),
    );
    return options.lease ? leased(shared, options.points) : shared;
  };
}

/**
 * Counters in this process's memory (RateLimiterMemory): for PGlite, whose one process sees every request.
 *
 * @example
 * const perKey = memoryCounters({ name: 'test', points: 3, durationSeconds: 60 });
 */
export const memoryCounters: CounterStore = (options) => counter(new RateLimiterMemory(limits(options)));

function limits(options: CounterOptions) {
  return { keyPrefix: options.name, points: options.points, duration: options.durationSeconds };
}

function counter(limiter: RateLimiterAbstract): Counter {
  return {
    async consume(key, points = 1) {
      try {
        const res = await limiter.consume(storeKey(key), points);
        return {
          allowed: true,
          remaining: res.remainingPoints,
          msBeforeNext: res.msBeforeNext,
          consumed: res.consumedPoints,
        };
      } catch (rejection) {
        // The library rejects with its result when over the limit, with an Error when the store failed.
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return {
          allowed: false,
          remaining: 0,
          msBeforeNext: rejection.msBeforeNext,
          consumed: rejection.consumedPoints,
        };
      }
    },
    async refund(key, points = 1) {
      await limiter.reward(storeKey(key), points);
    },
    async reset(key) {
      await limiter.delete(storeKey(key));
    },
  };
}
