import { resolve } from 'node:path';
import type { RateLimitPolicies } from './ratelimit.js';
import { parseRateLimits } from './ratelimit.js';

/** Resource quotas of API.md §11; each has its own environment variable. */
export interface Quotas {
  computersPerWorkspace: number;
  workspacesPerPrincipal: number;
  membersPerWorkspace: number;
  activeKeysPerServiceAccount: number;
  labelsPerComputer: number;
}

/** Everything the server reads from its environment, parsed and checked once at start-up. */
export interface Config {
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
  sandbox: boolean;
  bootstrapKeyFile: string;
  /** `undefined` when rate limiting is off (`SVC_RATE_LIMITS=off`). */
  rateLimits: RateLimitPolicies | undefined;
  quotas: Quotas;
  bodyLimitBytes: number;
  /** Time one step of a simulated computer transition takes. */
  simStepMs: number;
  /** How long a worker owns an operation before another replica may take it over. */
  operationLeaseMs: number;
  /** How many operations one replica runs at once. */
  operationConcurrency: number;
}

/** A bad environment value. Start-up stops with this message; nothing is guessed. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** The env variable names of the quotas, so docs and errors can list them. */
export const QUOTA_ENV: Record<keyof Quotas, [name: string, fallback: number]> = {
  computersPerWorkspace: ['SVC_QUOTA_COMPUTERS_PER_WORKSPACE', 20],
  workspacesPerPrincipal: ['SVC_QUOTA_WORKSPACES_PER_PRINCIPAL', 10],
  membersPerWorkspace: ['SVC_QUOTA_MEMBERS_PER_WORKSPACE', 100],
  activeKeysPerServiceAccount: ['SVC_QUOTA_ACTIVE_KEYS_PER_SERVICE_ACCOUNT', 5],
  labelsPerComputer: ['SVC_QUOTA_LABELS_PER_COMPUTER', 32],
};

/**
 * Reads the whole configuration from `env` (default `process.env`). `sandbox` (the `--sandbox` flag)
 * keeps data in memory unless `DATABASE_URL` is set.
 *
 * @example
 * const config = loadConfig({ PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
 * console.log(config.baseUrl); // 'http://127.0.0.1:0/v1'
 */
export function loadConfig(env: Env = process.env, options: { sandbox?: boolean } = {}): Readonly<Config> {
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
  return Object.freeze({
    host,
    port,
    baseUrl,
    tokenUrl: `${baseUrl}/auth/token`,
    databaseUrl,
    dataDir: sandbox ? undefined : resolve(env.SVC_DATA_DIR || '.svc/data'),
    sandbox,
    bootstrapKeyFile: resolve(env.SVC_BOOTSTRAP_KEY_FILE || '.svc/bootstrap-key.json'),
    rateLimits,
    quotas: Object.freeze(quotas),
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT_BYTES', 1024 * 1024, 1, 64 * 1024 * 1024),
    simStepMs: int(env, 'SVC_SIM_STEP_MS', 500, 0, 600_000),
    operationLeaseMs: int(env, 'SVC_OPERATION_LEASE_MS', 30_000, 100, 3_600_000),
    operationConcurrency: int(env, 'SVC_OPERATION_CONCURRENCY', 4, 1, 256),
  });
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
  // Published (PUBLISHED.md §4): the base address ends in the version prefix.
  if (!text.endsWith('/v1')) throw new ConfigError(`SVC_BASE_URL must end in /v1: ${value}`);
  return text;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  return raw === '1' || raw === 'true';
}
