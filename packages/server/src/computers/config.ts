// The computers' section of the configuration: what runs them, the operation worker, lifetimes, the
// read cache and waits, how long their logs are kept, and the quotas of computers, labels and
// snapshots (design §11). The Docker driver's settings are docker/config.ts; files' files/config.ts.
import { type Env, int, oneOf, quotas } from '../platform/config.js';

/** The computer drivers `SVC_DRIVER` may name. */
const DRIVER_NAMES = ['simulated', 'docker'] as const;
/** A computer driver `SVC_DRIVER` may name. */
export type DriverName = (typeof DRIVER_NAMES)[number];

/** The quotas of computers (design §11); each has its own environment variable. */
export interface ComputerQuotas {
  computersPerWorkspace: number;
  labelsPerComputer: number;
  snapshotsPerWorkspace: number;
}

/** The computers' settings. */
export interface ComputersSection {
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
  /** Time one step of a simulated computer transition takes. */
  simStepMs: number;
  /** `SVC_SIM_FLEET=on`: the simulated driver places creates on the hosts table (SIMULATED fleet; design §4.4). */
  simFleet: boolean;
  /** What runs computers (`SVC_DRIVER`): `simulated` (the default) or `docker`. */
  driver: DriverName;
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
  quotas: ComputerQuotas;
}

/**
 * The computers' settings from `env`.
 *
 * @example
 * computersSection({ SVC_DRIVER: 'docker' }).driver; // 'docker'
 */
export function computersSection(env: Env): ComputersSection {
  return {
    readCache: oneOf(env, 'SVC_READ_CACHE', ['on', 'off'] as const) === 'on',
    computerWaitsPerPrincipal: int(env, 'SVC_COMPUTER_WAITS_PER_PRINCIPAL', 10, 1, 10_000),
    simStepMs: int(env, 'SVC_SIM_STEP_MS', 500, 0, 600_000),
    simFleet: oneOf(env, 'SVC_SIM_FLEET', ['off', 'on'] as const) === 'on',
    lifetimeCheckMs: int(env, 'SVC_LIFETIME_CHECK_MS', 5000, 10, 600_000),
    driver: oneOf(env, 'SVC_DRIVER', DRIVER_NAMES),
    operationLeaseMs: int(env, 'SVC_OPERATION_LEASE_MS', 30_000, 100, 3_600_000),
    operationConcurrency: int(env, 'SVC_OPERATION_CONCURRENCY', 4, 1, 256),
    eventRetentionHours: int(env, 'SVC_EVENT_RETENTION_HOURS', 7 * 24, 1, 24 * 366),
    outputRetentionHours: int(env, 'SVC_OUTPUT_RETENTION_HOURS', 24, 1, 24 * 366),
    quotas: quotas(env, {
      computersPerWorkspace: ['SVC_QUOTA_COMPUTERS_PER_WORKSPACE', 20],
      labelsPerComputer: ['SVC_QUOTA_LABELS_PER_COMPUTER', 32],
      snapshotsPerWorkspace: ['SVC_QUOTA_SNAPSHOTS_PER_WORKSPACE', 10],
    }),
  };
}
