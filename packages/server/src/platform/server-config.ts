// The server's own section of the configuration, what every part stands on: where it listens and its
// public address, its database, its request bounds and rate limits, its logs and metrics, its shutdown.
import { resolve } from 'node:path';
import { ConfigError, type Env, flag, int } from './config.js';
import { type ConnectionBounds, DEFAULT_CONNECTION_BOUNDS } from './db/postgres.js';
import { type LogLevel, parseLogLevel } from './observe/logger.js';
import { parseRateLimits, type RateLimitPolicies } from './ratelimit.js';

/** The server's own settings. */
export interface ServerSection {
  host: string;
  port: number;
  /** The public base address, ending in `/v1`: `iss`/`aud` of access tokens, `base_url` of key files. */
  baseUrl: string;
  /** PostgreSQL when set; otherwise PGlite under `dataDir` (or in memory in sandbox mode). */
  databaseUrl: string | undefined;
  /** PGlite files; `undefined` means in memory (sandbox and tests). */
  dataDir: string | undefined;
  /** Connections in the PostgreSQL pool (`SVC_DB_POOL_SIZE`, default 10); one more listens for NOTIFY. */
  poolSize: number;
  /**
   * The bounds on the database's waits (`SVC_DB_CHECKOUT_TIMEOUT_MS`, `SVC_DB_STATEMENT_TIMEOUT_MS`,
   * `SVC_DB_LOCK_TIMEOUT_MS`, `SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS`; PostgreSQL).
   */
  dbBounds: Readonly<ConnectionBounds>;
  sandbox: boolean;
  /** `undefined` when rate limiting is off (`SVC_RATE_LIMITS=off`). */
  rateLimits: RateLimitPolicies | undefined;
  bodyLimitBytes: number;
  /**
   * How long a whole request may take to arrive, headers and body (`SVC_REQUEST_TIMEOUT_MS`, default
   * 5 minutes, 10 s – 24 h): past it node:http answers 408 and closes. It bounds the slowest upload:
   * raise it for large files over slow links (1 GiB in 5 minutes is 3.6 MB/s).
   */
  requestTimeoutMs: number;
  /** `LOG_LEVEL`: pino's levels or `silent`; default `info`. */
  logLevel: LogLevel;
  /** `SVC_METRICS_PORT` and `SVC_METRICS_HOST` (default 127.0.0.1); `undefined` (no metrics) when the port is unset. */
  metrics: { host: string; port: number } | undefined;
  /** `SVC_SHUTDOWN_TIMEOUT_MS`: how long SIGTERM may take before what is left is cut (default 30 s). */
  shutdownTimeoutMs: number;
  /** `SVC_DRAIN_DELAY_MS`: after SIGTERM, how long to go on serving while `/ready` says 503 (default 5 s). */
  drainDelayMs: number;
}

/**
 * The server's own settings from `env`. `sandbox` (the `--sandbox` flag) keeps data in memory unless
 * `DATABASE_URL` is set.
 *
 * @example
 * serverSection({ PORT: '0' }, { sandbox: true }).baseUrl; // 'http://127.0.0.1:0/v1'
 */
export function serverSection(env: Env, options: { sandbox?: boolean } = {}): ServerSection {
  const host = env.HOST || '127.0.0.1';
  const port = int(env, 'PORT', 8080, 0, 65535);
  const sandbox = options.sandbox ?? flag(env, 'SVC_SANDBOX');
  const baseUrl = parseBaseUrl(
    env.SVC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
  );
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  let rateLimits: RateLimitPolicies | undefined;
  try {
    rateLimits = parseRateLimits(env.SVC_RATE_LIMITS);
  } catch (error) {
    throw new ConfigError(`SVC_RATE_LIMITS: ${(error as Error).message}`);
  }
  let logLevel: LogLevel;
  try {
    logLevel = parseLogLevel(env.LOG_LEVEL);
  } catch (error) {
    throw new ConfigError(`LOG_LEVEL: ${(error as Error).message}`);
  }
  const metrics = env.SVC_METRICS_PORT
    ? { host: env.SVC_METRICS_HOST || '127.0.0.1', port: int(env, 'SVC_METRICS_PORT', 0, 0, 65535) }
    : undefined;
  const shutdownTimeoutMs = int(env, 'SVC_SHUTDOWN_TIMEOUT_MS', 30_000, 1000, 600_000);
  return {
    host,
    port,
    baseUrl,
    databaseUrl,
    dataDir: sandbox ? undefined : resolve(env.SVC_DATA_DIR || '.svc/data'),
    poolSize: int(env, 'SVC_DB_POOL_SIZE', 10, 1, 1000),
    dbBounds: Object.freeze(dbBounds(env)),
    sandbox,
    rateLimits,
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT_BYTES', 1024 * 1024, 1, 64 * 1024 * 1024),
    requestTimeoutMs: int(env, 'SVC_REQUEST_TIMEOUT_MS', 300_000, 10_000, 24 * 3_600_000),
    logLevel,
    metrics: metrics && Object.freeze(metrics),
    shutdownTimeoutMs,
    drainDelayMs: int(env, 'SVC_DRAIN_DELAY_MS', Math.min(5000, shutdownTimeoutMs), 0, shutdownTimeoutMs),
  };
}

/** `SVC_DB_*_TIMEOUT_MS`: the database's waits, by default {@link DEFAULT_CONNECTION_BOUNDS}. */
function dbBounds(env: Env): ConnectionBounds {
  const d = DEFAULT_CONNECTION_BOUNDS;
  return {
    checkoutTimeoutMs: int(env, 'SVC_DB_CHECKOUT_TIMEOUT_MS', d.checkoutTimeoutMs, 1, 600_000),
    statementTimeoutMs: int(env, 'SVC_DB_STATEMENT_TIMEOUT_MS', d.statementTimeoutMs, 1, 3_600_000),
    lockTimeoutMs: int(env, 'SVC_DB_LOCK_TIMEOUT_MS', d.lockTimeoutMs, 1, 3_600_000),
    idleInTransactionTimeoutMs: int(
      env,
      'SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
      d.idleInTransactionTimeoutMs,
      1,
      3_600_000,
    ),
  };
}

function parseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`SVC_BASE_URL is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError('SVC_BASE_URL must be http or https');
  if (url.search || url.hash) throw new ConfigError('SVC_BASE_URL must not have a query or fragment');
  const text = url.href.replace(/\/+$/, '');
  // Published (conventions §4): the base address ends in the version prefix.
  if (!text.endsWith('/v1')) throw new ConfigError(`SVC_BASE_URL must end in /v1: ${value}`);
  return text;
}
