import { dirname, resolve } from 'node:path';
import {
  byteOperationIds,
  byteRequestBody,
  deref,
  listOperations,
  loadDocument,
  responseFor,
} from '@svc/contract';
import { type ConnectionBounds, DEFAULT_CONNECTION_BOUNDS } from './db/postgres.js';
import type { LogLevel } from './observe/logger.js';
import { parseLogLevel } from './observe/logger.js';
import type { RateLimitPolicies } from './ratelimit.js';
import { parseRateLimits } from './ratelimit.js';
import { RESOURCES, type Resource, type Resources } from './resources.js';

/** Resource quotas of design §11; each has its own environment variable. */
export interface Quotas {
  computersPerWorkspace: number;
  workspacesPerPrincipal: number;
  membersPerWorkspace: number;
  activeKeysPerServiceAccount: number;
  labelsPerComputer: number;
  webhookEndpointsPerWorkspace: number;
  snapshotsPerWorkspace: number;
}

/** Outbound webhooks (design "Webhooks"). */
export interface WebhookConfig {
  /** `SVC_WEBHOOK_CONCURRENCY` (default 8): attempts in flight at once on this replica, shared across endpoints. */
  concurrency: number;
  /**
   * `SVC_WEBHOOK_RETRY_SCHEDULE`: seconds after each failed attempt before the next, comma-separated
   * (default Standard Webhooks' 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); past the last the delivery fails.
   */
  retryScheduleSeconds: readonly number[];
  /** `SVC_WEBHOOKS_ALLOW_LOOPBACK` (`true`; default off): loopback receivers, for development and tests only. */
  allowLoopback: boolean;
  /** `SVC_WEBHOOK_POLL_MS` (default 1 s): how often the worker looks for due retries when nothing wakes it. */
  pollMs: number;
  /**
   * `SVC_WEBHOOK_LEASE_MS` (default 30 s): how long a replica holds a delivery it attempts without
   * renewing it (it renews every third while the receiver has the request); a replica that dies
   * mid-attempt loses it then, and another replica tries again.
   */
  leaseMs: number;
}

/** What the server reads from its environment, but for the features' sections (compose/config.ts). */
export interface BaseConfig {
  host: string;
  port: number;
  /** The public base address, ending in `/v1`: `iss`/`aud` of access tokens, `base_url` of key files. */
  baseUrl: string;
  /** The exact `aud` an assertion must carry: `${baseUrl}/auth/token`. */
  tokenUrl: string;
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
  /**
   * `SVC_READ_CACHE` (`on`, default, or `off`): computers and their list pages are cached per replica
   * (never older than the database; see `ReadCache`). `off` reads the database every time.
   */
  readCache: boolean;
  /**
   * `SVC_COMPUTER_WAITS_PER_PRINCIPAL` (default 10): the `GET …/computers/{computer}?wait_for=` waits one
   * principal may hold at once on this replica; one more is answered 429 (`computer-waits`).
   */
  computerWaitsPerPrincipal: number;
  /**
   * `SVC_STREAMS_PER_PRINCIPAL` (default 16): the event streams (`GET …/operations/{operation}/output`,
   * `GET …/workspaces/{workspace}/events`) one principal may hold open at once on this replica; one
   * more is answered 429 (`streams`).
   */
  streamsPerPrincipal: number;
  /** `SVC_STREAM_KEEPALIVE_MS` (default 15 s): how often an open event stream sends a `: keepalive` comment. */
  streamKeepaliveMs: number;
  /** Files on computers (`SVC_FILES_*`): the limits of one transfer and of a computer's files. */
  files: FilesConfig;
  sandbox: boolean;
  bootstrapKeyFile: string;
  /** `undefined` when rate limiting is off (`SVC_RATE_LIMITS=off`). */
  rateLimits: RateLimitPolicies | undefined;
  /** Sign-in limits (`SVC_SIGNIN_LIMITS`): per address, per account, failures per account and address. */
  signinLimits: Required<SigninAttemptsOptions>;
  /** Password checks at once per process (`SVC_SIGNIN_HASH_CONCURRENCY`); more are answered 429. */
  signinHashConcurrency: number | undefined;
  /**
   * The key that seals the signing keys at rest (`SVC_SECRET_KEY`, 32 bytes in base64url); when
   * unset, read from (or generated into) `secretKeyFile`, outside the database.
   */
  secretKey: string | undefined;
  /** `SVC_SECRET_KEY_FILE`, default `secret-key` beside the data directory (mode 0600). */
  secretKeyFile: string;
  quotas: Quotas;
  webhooks: Readonly<WebhookConfig>;
  bodyLimitBytes: number;
  /**
   * How long a whole request may take to arrive, headers and body (`SVC_REQUEST_TIMEOUT_MS`, default
   * 5 minutes, 10 s – 24 h): past it node:http answers 408 and closes. It bounds the slowest upload:
   * raise it for large files over slow links (1 GiB in 5 minutes is 3.6 MB/s).
   */
  requestTimeoutMs: number;
  /** Time one step of a simulated computer transition takes. */
  simStepMs: number;
  /** `SVC_SIM_FLEET=on`: the simulated driver places creates on the hosts table (SIMULATED fleet; design §4.4). */
  simFleet: boolean;
  /** What runs computers (`SVC_DRIVER`): `simulated` (the default) or `docker`. */
  driver: DriverName;
  /** The Docker driver's settings; read only when `driver` is `docker`. */
  docker: DockerConfig;
  /** The fleet of Docker hosts: placement and health (design §4.4). */
  fleet: FleetConfig;
  /** How long a worker owns an operation before another replica may take it over. */
  operationLeaseMs: number;
  /**
   * `SVC_LIFETIME_CHECK_MS` (default 5000): how often each replica looks for computers past their
   * idle timeout or expiry and ends them (design §4.1).
   */
  lifetimeCheckMs: number;
  /** How many operations one replica runs at once. */
  operationConcurrency: number;
  /** `SVC_EVENT_RETENTION_HOURS` (default 168, 7 days): how long a workspace's event log keeps an event. */
  eventRetentionHours: number;
  /**
   * `SVC_OUTPUT_RETENTION_HOURS` (default 24): how long a command's output log is kept after its
   * operation ended (the operation keeps its `result`).
   */
  outputRetentionHours: number;
  /** `LOG_LEVEL`: pino's levels or `silent`; default `info`. */
  logLevel: LogLevel;
  /** `SVC_METRICS_PORT` and `SVC_METRICS_HOST` (default 127.0.0.1); `undefined` (no metrics) when the port is unset. */
  metrics: { host: string; port: number } | undefined;
  /** `SVC_SHUTDOWN_TIMEOUT_MS`: how long SIGTERM may take before what is left is cut (default 30 s). */
  shutdownTimeoutMs: number;
  /** `SVC_DRAIN_DELAY_MS`: after SIGTERM, how long to go on serving while `/ready` says 503 (default 5 s). */
  drainDelayMs: number;
}

/** The limits of files on computers (design, "Files on computers"). */
export interface FilesConfig {
  /**
   * `SVC_FILES_MAX_BYTES` (default and most: the spec's `x-svc-max-bytes`, 1 GiB): the bytes one upload
   * (a file or an archive) may carry; more is 413 `payload_too_large`.
   */
  maxBytes: number;
  /** `SVC_FILES_QUOTA_BYTES` (default 10 GiB): the bytes of regular files under `/home` per computer (403 `quota_exceeded`). */
  quotaBytes: number;
  /** `SVC_FILES_MAX_ENTRIES` (default and most: the spec's 10,000): the entries one uploaded archive may hold. */
  maxEntries: number;
  /**
   * `SVC_FILES_HEAP_TUNING` (`on`, the default, or `off`): whether `svc-server` tunes V8's heap for
   * file traffic (a young collection every 8 MiB of file bytes moved, a larger heap growing factor).
   */
  heapTuning: boolean;
}

/** What the spec allows the files settings at most: its `x-svc-max-bytes`, and the entries of an archive. */
function filesBounds(): { maxBytes: number; maxEntries: number } {
  const document = loadDocument();
  const maxBytes = Math.max(
    ...byteOperationIds(document).map((id) => byteRequestBody(document, id)?.maxBytes ?? 0),
  );
  const upload = listOperations(document).find((op) => op.operationId === 'uploadComputerArchive');
  type Props = { properties?: Record<string, object>; maximum?: unknown };
  const ok = upload && (responseFor(document, upload, 200)?.schema as Props | undefined);
  const archive = deref(document, ok?.properties?.archive ?? {}) as Props;
  const entries = deref(document, archive.properties?.entries ?? {}) as Props;
  return { maxBytes, maxEntries: Number(entries.maximum) };
}

/** The computer drivers `SVC_DRIVER` may name. */
const DRIVER_NAMES = ['simulated', 'docker'] as const;
export type DriverName = (typeof DRIVER_NAMES)[number];

/** The Docker driver's environment (`SVC_DOCKER_*`). */
export interface DockerConfig {
  /** The Engine API's Unix socket (`SVC_DOCKER_SOCKET`, default `/var/run/docker.sock`). */
  socketPath: string;
  /** How often the driver compares every container with its computer (`SVC_DOCKER_SWEEP_MS`). */
  sweepMs: number;
  /**
   * The `svc.instance` label on every container of this deployment (`SVC_DOCKER_INSTANCE`): the driver
   * lists and touches only containers that carry it, so deployments (and test runs) can share an Engine.
   */
  instance: string;
  /** `never` (the default: images are built or pulled by the operator) or `missing` (`SVC_DOCKER_PULL`). */
  pull: 'never' | 'missing';
  /**
   * Whether commands go through an exec agent in each running container (`SVC_DOCKER_EXEC_AGENT`, `on`
   * by default; `off`: the Engine's exec for every command). See `src/operations/docker/agent.ts`.
   */
  execAgent: boolean;
  /** The warm pool of ready containers that creates claim (`SVC_POOL*`; design §4.3). Empty: no pool. */
  pool: WarmPoolConfig;
  /**
   * The name under which every replica registers the Engine of `socketPath` as a host of the fleet at
   * start-up, unless a host of that name exists (`SVC_DOCKER_HOST_NAME`, default `local`; empty: none,
   * the fleet is only what `svc-server hosts add` registered). Design §4.4.
   */
  hostName: string;
  /**
   * That host's capacity when it is registered (`SVC_DOCKER_CAPACITY`, e.g.
   * `vcpus=16,memory_mib=65536,computers=200`); a resource left out is read from the Engine: 16 vCPUs
   * per CPU, 4× its memory, 1000 computers (what a host allows, not what it has; design §4.4).
   */
  capacity: Partial<Resources>;
}

/** The fleet of hosts (`SVC_FLEET_POLICY`, `SVC_HOST_*`; design §4.4). */
export interface FleetConfig {
  /** `pack` (default: the fullest host that fits) or `spread` (the emptiest). */
  policy: 'pack' | 'spread';
  /** How often each replica pings every host and records the heartbeat (`SVC_HOST_HEARTBEAT_MS`, 5000). */
  heartbeatMs: number;
  /** A host without a heartbeat this long is unhealthy (`SVC_HOST_UNHEALTHY_MS`, 30000). */
  unhealthyAfterMs: number;
}

/** One kind of pooled container: how many ready containers of `image` at `size` to keep. */
export interface WarmPoolTarget {
  image: string;
  size: string;
  count: number;
}

/** The warm pool's settings (`SVC_POOL`, `SVC_POOL_MAX_CONTAINERS`, `SVC_POOL_MAX_MEMORY_MIB`, `SVC_POOL_REFILL_MS`). */
export interface WarmPoolConfig {
  /**
   * `SVC_POOL`, e.g. `busybox:small=2,debian-12:medium=1`: image and size names of the catalogue.
   * Unset: {@link DEFAULT_POOL}; empty or `off`: no pool.
   */
  targets: readonly WarmPoolTarget[];
  /** Whether the targets are the default (`SVC_POOL` unset): a catalogue without them is no error then. */
  defaulted: boolean;
  /** The most ready containers the pool holds in all (`SVC_POOL_MAX_CONTAINERS`, default 16). */
  maxContainers: number;
  /** The most memory their sizes add up to (`SVC_POOL_MAX_MEMORY_MIB`, default 16384). */
  maxMemoryMib: number;
  /** How often each replica tops the pool up, besides after every claim (`SVC_POOL_REFILL_MS`, default 2000). */
  refillMs: number;
}

/** A bad environment value. Start-up stops with this message; nothing is guessed. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The environment a configuration is read from (`process.env`, or a test's). */
export type Env = Record<string, string | undefined>;

/** The env variable names of the quotas, so docs and errors can list them. */
const QUOTA_ENV: Record<keyof Quotas, [name: string, fallback: number]> = {
  computersPerWorkspace: ['SVC_QUOTA_COMPUTERS_PER_WORKSPACE', 20],
  workspacesPerPrincipal: ['SVC_QUOTA_WORKSPACES_PER_PRINCIPAL', 10],
  membersPerWorkspace: ['SVC_QUOTA_MEMBERS_PER_WORKSPACE', 100],
  activeKeysPerServiceAccount: ['SVC_QUOTA_ACTIVE_KEYS_PER_SERVICE_ACCOUNT', 5],
  labelsPerComputer: ['SVC_QUOTA_LABELS_PER_COMPUTER', 32],
  webhookEndpointsPerWorkspace: ['SVC_QUOTA_WEBHOOK_ENDPOINTS_PER_WORKSPACE', 16],
  snapshotsPerWorkspace: ['SVC_QUOTA_SNAPSHOTS_PER_WORKSPACE', 10],
};

/**
 * Reads the configuration but for the features' sections from `env`. `sandbox` (the `--sandbox` flag)
 * keeps data in memory unless `DATABASE_URL` is set.
 *
 * @example
 * const config = baseConfig({ PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
 * console.log(config.baseUrl); // 'http://127.0.0.1:0/v1'
 */
export function baseConfig(env: Env, options: { sandbox?: boolean } = {}): BaseConfig {
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
  const quotas = Object.fromEntries(
    Object.entries(QUOTA_ENV).map(([key, [name, fallback]]) => [key, int(env, name, fallback, 0, 1_000_000)]),
  ) as unknown as Quotas;
  let rateLimits: RateLimitPolicies | undefined;
  try {
    rateLimits = parseRateLimits(env.SVC_RATE_LIMITS);
  } catch (error) {
    throw new ConfigError(`SVC_RATE_LIMITS: ${(error as Error).message}`);
  }
  const dataDir = sandbox ? undefined : resolve(env.SVC_DATA_DIR || '.svc/data');
  const secretKey = env.SVC_SECRET_KEY || undefined;
  if (secretKey !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(secretKey))
    throw new ConfigError('SVC_SECRET_KEY must be 32 random bytes in base64url (43 characters)');
  const hashConcurrency = env.SVC_SIGNIN_HASH_CONCURRENCY
    ? int(env, 'SVC_SIGNIN_HASH_CONCURRENCY', 2, 1, 64)
    : undefined;
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
  const bounds = filesBounds();
  return {
    host,
    port,
    baseUrl,
    tokenUrl: `${baseUrl}/auth/token`,
    databaseUrl,
    dataDir,
    poolSize: int(env, 'SVC_DB_POOL_SIZE', 10, 1, 1000),
    dbBounds: Object.freeze({
      checkoutTimeoutMs: int(
        env,
        'SVC_DB_CHECKOUT_TIMEOUT_MS',
        DEFAULT_CONNECTION_BOUNDS.checkoutTimeoutMs,
        1,
        600_000,
      ),
      statementTimeoutMs: int(
        env,
        'SVC_DB_STATEMENT_TIMEOUT_MS',
        DEFAULT_CONNECTION_BOUNDS.statementTimeoutMs,
        1,
        3_600_000,
      ),
      lockTimeoutMs: int(
        env,
        'SVC_DB_LOCK_TIMEOUT_MS',
        DEFAULT_CONNECTION_BOUNDS.lockTimeoutMs,
        1,
        3_600_000,
      ),
      idleInTransactionTimeoutMs: int(
        env,
        'SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
        DEFAULT_CONNECTION_BOUNDS.idleInTransactionTimeoutMs,
        1,
        3_600_000,
      ),
    }),
    readCache: oneOf(env, 'SVC_READ_CACHE', ['on', 'off'] as const) === 'on',
    computerWaitsPerPrincipal: int(env, 'SVC_COMPUTER_WAITS_PER_PRINCIPAL', 10, 1, 10_000),
    streamsPerPrincipal: int(env, 'SVC_STREAMS_PER_PRINCIPAL', 16, 1, 10_000),
    streamKeepaliveMs: int(env, 'SVC_STREAM_KEEPALIVE_MS', 15_000, 10, 300_000),
    files: Object.freeze({
      maxBytes: int(env, 'SVC_FILES_MAX_BYTES', bounds.maxBytes, 1, bounds.maxBytes),
      quotaBytes: int(env, 'SVC_FILES_QUOTA_BYTES', 10 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
      maxEntries: int(env, 'SVC_FILES_MAX_ENTRIES', bounds.maxEntries, 1, bounds.maxEntries),
      heapTuning: oneOf(env, 'SVC_FILES_HEAP_TUNING', ['on', 'off'] as const) === 'on',
    }),
    sandbox,
    bootstrapKeyFile: resolve(env.SVC_BOOTSTRAP_KEY_FILE || '.svc/bootstrap-key.json'),
    rateLimits,
    signinLimits: parseSigninLimits(env.SVC_SIGNIN_LIMITS),
    signinHashConcurrency: hashConcurrency,
    secretKey,
    secretKeyFile: resolve(
      env.SVC_SECRET_KEY_FILE || resolve(dirname(dataDir ?? resolve('.svc/data')), 'secret-key'),
    ),
    quotas: Object.freeze(quotas),
    webhooks: Object.freeze({
      concurrency: int(env, 'SVC_WEBHOOK_CONCURRENCY', 8, 1, 256),
      retryScheduleSeconds: parseRetrySchedule(env.SVC_WEBHOOK_RETRY_SCHEDULE),
      allowLoopback: flag(env, 'SVC_WEBHOOKS_ALLOW_LOOPBACK'),
      pollMs: int(env, 'SVC_WEBHOOK_POLL_MS', 1000, 10, 600_000),
      leaseMs: int(env, 'SVC_WEBHOOK_LEASE_MS', 30_000, 100, 3_600_000),
    }),
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT_BYTES', 1024 * 1024, 1, 64 * 1024 * 1024),
    requestTimeoutMs: int(env, 'SVC_REQUEST_TIMEOUT_MS', 300_000, 10_000, 24 * 3_600_000),
    simStepMs: int(env, 'SVC_SIM_STEP_MS', 500, 0, 600_000),
    simFleet: oneOf(env, 'SVC_SIM_FLEET', ['off', 'on'] as const) === 'on',
    lifetimeCheckMs: int(env, 'SVC_LIFETIME_CHECK_MS', 5000, 10, 600_000),
    driver: oneOf(env, 'SVC_DRIVER', DRIVER_NAMES),
    docker: Object.freeze({
      socketPath: env.SVC_DOCKER_SOCKET || '/var/run/docker.sock',
      sweepMs: int(env, 'SVC_DOCKER_SWEEP_MS', 30_000, 100, 3_600_000),
      instance: dockerInstance(env.SVC_DOCKER_INSTANCE),
      pull: oneOf(env, 'SVC_DOCKER_PULL', ['never', 'missing'] as const),
      execAgent: oneOf(env, 'SVC_DOCKER_EXEC_AGENT', ['on', 'off'] as const) === 'on',
      pool: Object.freeze(warmPool(env)),
      hostName: hostName(env.SVC_DOCKER_HOST_NAME),
      capacity: Object.freeze(capacity(env.SVC_DOCKER_CAPACITY)),
    }),
    fleet: Object.freeze({
      policy: oneOf(env, 'SVC_FLEET_POLICY', ['pack', 'spread'] as const),
      heartbeatMs: int(env, 'SVC_HOST_HEARTBEAT_MS', 5000, 50, 600_000),
      unhealthyAfterMs: int(env, 'SVC_HOST_UNHEALTHY_MS', 30_000, 100, 3_600_000),
    }),
    operationLeaseMs: int(env, 'SVC_OPERATION_LEASE_MS', 30_000, 100, 3_600_000),
    operationConcurrency: int(env, 'SVC_OPERATION_CONCURRENCY', 4, 1, 256),
    eventRetentionHours: int(env, 'SVC_EVENT_RETENTION_HOURS', 7 * 24, 1, 24 * 366),
    outputRetentionHours: int(env, 'SVC_OUTPUT_RETENTION_HOURS', 24, 1, 24 * 366),
    logLevel,
    metrics: metrics && Object.freeze(metrics),
    shutdownTimeoutMs,
    drainDelayMs: int(env, 'SVC_DRAIN_DELAY_MS', Math.min(5000, shutdownTimeoutMs), 0, shutdownTimeoutMs),
  };
}

/** Standard Webhooks' recommended schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (about 27.5 h). */
const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

function parseRetrySchedule(text: string | undefined): readonly number[] {
  if (!text) return Object.freeze([...DEFAULT_WEBHOOK_RETRY_SCHEDULE]);
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > 20 || parts.some((part) => !/^\d{1,6}$/.test(part)))
    throw new ConfigError(
      `SVC_WEBHOOK_RETRY_SCHEDULE: expected up to 20 comma-separated whole seconds, got ${JSON.stringify(text)}`,
    );
  return Object.freeze(parts.map(Number));
}

const SIGNIN_LIMIT_NAMES = ['address', 'account', 'failures'] as const;

/** `quota` per `windowSeconds`. */
export interface SigninLimit {
  quota: number;
  windowSeconds: number;
}

/** Options of {@link SigninAttempts}. */
export interface SigninAttemptsOptions {
  /** Wrong passwords allowed per account and client address within the window. Default 5. */
  maxFailures?: number;
  /** The failure window, default 15 minutes. */
  windowSeconds?: number;
  /** Sign-in posts per client address, whatever the account. Default 30 per minute. */
  address?: SigninLimit;
  /** Wrong passwords per account, from every address together. Default 50 per 15 minutes. */
  account?: SigninLimit;
}

/** The sign-in limits when `SVC_SIGNIN_LIMITS` does not set them (`SigninAttempts` takes them as well). */
export const DEFAULT_SIGNIN_LIMITS = Object.freeze({
  maxFailures: 5,
  windowSeconds: 15 * 60,
  address: Object.freeze({ quota: 30, windowSeconds: 60 }),
  account: Object.freeze({ quota: 50, windowSeconds: 15 * 60 }),
});

/**
 * `SVC_SIGNIN_LIMITS`: a comma list `name=quota/seconds` over the defaults, names `address` (posts
 * per client address), `account` (wrong passwords per account) and `failures` (wrong passwords per
 * account and address), e.g. `address=30/60,account=50/900,failures=5/900`. Never off.
 */
function parseSigninLimits(text: string | undefined): Required<SigninAttemptsOptions> {
  const limits: Required<SigninAttemptsOptions> = {
    maxFailures: DEFAULT_SIGNIN_LIMITS.maxFailures,
    windowSeconds: DEFAULT_SIGNIN_LIMITS.windowSeconds,
    address: { ...DEFAULT_SIGNIN_LIMITS.address },
    account: { ...DEFAULT_SIGNIN_LIMITS.account },
  };
  for (const part of (text ?? '').split(',').filter((p) => p.trim() !== '')) {
    const match = /^\s*([a-z]+)\s*=\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(part);
    const name = match?.[1] as (typeof SIGNIN_LIMIT_NAMES)[number] | undefined;
    const quota = Number(match?.[2]);
    const windowSeconds = Number(match?.[3]);
    if (!match || !name || !SIGNIN_LIMIT_NAMES.includes(name) || quota < 1 || windowSeconds < 1)
      throw new ConfigError(
        `SVC_SIGNIN_LIMITS: expected ${SIGNIN_LIMIT_NAMES.join('|')}=quota/seconds (both ≥ 1), got ${JSON.stringify(part)}`,
      );
    if (name === 'failures') Object.assign(limits, { maxFailures: quota, windowSeconds });
    else limits[name] = { quota, windowSeconds };
  }
  return limits;
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

/**
 * The whole number `name` sets, `fallback` when unset or empty; anything else, or one outside
 * `min`–`max`, is a {@link ConfigError} naming the variable.
 *
 * @example
 * int({ PORT: '9000' }, 'PORT', 8080, 0, 65535); // 9000
 */
export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/**
 * One of `values`, named by `name`; the first of `values` is the default.
 *
 * @example
 * oneOf({ SVC_READ_CACHE: 'off' }, 'SVC_READ_CACHE', ['on', 'off'] as const); // 'off'
 */
export function oneOf<T extends string>(env: Env, name: string, values: readonly [T, ...T[]]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return values[0];
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

/**
 * The warm pool the Docker driver ships with (`SVC_POOL` unset): one ready busybox container, so the
 * first create and its first command skip the Engine's create and start; with demand the pool grows
 * within `SVC_POOL_MAX_*` (design §4.3). At rest it holds one idle container (an init and the exec
 * agent's shell: about 1 MiB of memory, no CPU), counted at its size's 4 GiB limit against
 * `SVC_POOL_MAX_MEMORY_MIB`.
 */
export const DEFAULT_POOL = 'busybox:small=1';

/** `SVC_POOL*`: the pool's targets and bounds; the targets' total count within `SVC_POOL_MAX_CONTAINERS`. */
function warmPool(env: Env): WarmPoolConfig {
  const maxContainers = int(env, 'SVC_POOL_MAX_CONTAINERS', 16, 0, 1000);
  const targets: WarmPoolTarget[] = [];
  const defaulted = env.SVC_POOL === undefined;
  const spec = defaulted ? DEFAULT_POOL : env.SVC_POOL?.trim() === 'off' ? '' : (env.SVC_POOL ?? '');
  for (const part of spec.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const match = /^([a-z0-9][a-z0-9._-]{0,62}):([a-z0-9][a-z0-9._-]{0,62})=(\d{1,4})$/.exec(entry);
    if (!match)
      throw new ConfigError(
        `SVC_POOL must be a comma-separated list of <image>:<size>=<count> (e.g. busybox:small=2), got ${JSON.stringify(entry)}`,
      );
    const [, image = '', size = '', count = '0'] = match;
    if (targets.some((t) => t.image === image && t.size === size))
      throw new ConfigError(`SVC_POOL names ${image}:${size} twice`);
    if (Number(count) > 0) targets.push(Object.freeze({ image, size, count: Number(count) }));
  }
  const total = targets.reduce((sum, t) => sum + t.count, 0);
  if (total > maxContainers)
    throw new ConfigError(
      `SVC_POOL asks for ${total} ready containers, more than SVC_POOL_MAX_CONTAINERS=${maxContainers}`,
    );
  return {
    targets: Object.freeze(targets),
    defaulted,
    maxContainers,
    maxMemoryMib: int(env, 'SVC_POOL_MAX_MEMORY_MIB', 16_384, 0, 1024 * 1024),
    refillMs: int(env, 'SVC_POOL_REFILL_MS', 2000, 10, 600_000),
  };
}

/** `SVC_DOCKER_HOST_NAME`: `local` unless set; set and empty, no host is registered at start-up. */
function hostName(raw: string | undefined): string {
  if (raw === undefined) return 'local';
  if (raw !== '' && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(raw))
    throw new ConfigError(
      `SVC_DOCKER_HOST_NAME must be a DNS label (lowercase letters, digits and '-'), or empty, got ${JSON.stringify(raw)}`,
    );
  return raw;
}

/** One `resource=<n>` of a capacity. */
const CAPACITY_ENTRY = new RegExp(`^(${RESOURCES.join('|')})=(\\d{1,9})$`);

/**
 * A host capacity written `vcpus=16,memory_mib=65536,computers=200` (any of the three).
 *
 * @example
 * capacity('vcpus=8,computers=50'); // { vcpus: 8, computers: 50 }
 */
export function capacity(raw: string | undefined, name = 'SVC_DOCKER_CAPACITY'): Partial<Resources> {
  const result: Partial<Resources> = {};
  for (const part of (raw ?? '').split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const match = CAPACITY_ENTRY.exec(entry);
    if (!match)
      throw new ConfigError(
        `${name} must be a comma-separated list of ${RESOURCES.map((r) => `${r}=<n>`).join(', ')}, got ${JSON.stringify(entry)}`,
      );
    const key = match[1] as Resource;
    if (result[key] !== undefined) throw new ConfigError(`${name} names ${key} twice`);
    result[key] = Number(match[2]);
  }
  return result;
}

function dockerInstance(raw: string | undefined): string {
  const value = raw || 'default';
  // It becomes a label value and part of container names, which Docker limits to [a-zA-Z0-9_.-].
  if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(value))
    throw new ConfigError(
      `SVC_DOCKER_INSTANCE must be 1–63 lowercase letters, digits, '.', '_' or '-', got ${JSON.stringify(value)}`,
    );
  return value;
}

/**
 * A switch that is on only when `name` is `1` or `true`.
 *
 * @example
 * flag({ SVC_SANDBOX: '1' }, 'SVC_SANDBOX'); // true
 */
export function flag(env: Env, name: string): boolean {
  const raw = env[name];
  return raw === '1' || raw === 'true';
}
