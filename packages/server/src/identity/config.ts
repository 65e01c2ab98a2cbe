// Identity's section of the configuration: token addresses, the bootstrap key, the key that seals the
// signing keys, sign-in's limits, and the quotas of workspaces, members and keys (design §11).
import { dirname, resolve } from 'node:path';
import { ConfigError, type Env, int, quotas } from '../platform/config.js';

/** `quota` per `windowSeconds`. */
export interface SigninLimit {
  quota: number;
  windowSeconds: number;
}

/** Options of `SigninAttempts`. */
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

/** The quotas identity enforces (design §11); each has its own environment variable. */
export interface IdentityQuotas {
  workspacesPerPrincipal: number;
  membersPerWorkspace: number;
  activeKeysPerServiceAccount: number;
}

/** Identity's settings. */
export interface IdentitySection {
  /** The exact `aud` an assertion must carry: `${baseUrl}/auth/token`. */
  tokenUrl: string;
  bootstrapKeyFile: string;
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
  quotas: IdentityQuotas;
}

/**
 * Identity's settings from `env`, given the server's base address and data directory.
 *
 * @example
 * const identity = identitySection({}, { baseUrl: 'http://127.0.0.1:8080/v1', dataDir: undefined });
 * identity.tokenUrl; // 'http://127.0.0.1:8080/v1/auth/token'
 */
export function identitySection(
  env: Env,
  server: { baseUrl: string; dataDir: string | undefined },
): IdentitySection {
  const secretKey = env.SVC_SECRET_KEY || undefined;
  if (secretKey !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(secretKey))
    throw new ConfigError('SVC_SECRET_KEY must be 32 random bytes in base64url (43 characters)');
  return {
    tokenUrl: `${server.baseUrl}/auth/token`,
    bootstrapKeyFile: resolve(env.SVC_BOOTSTRAP_KEY_FILE || '.svc/bootstrap-key.json'),
    signinLimits: parseSigninLimits(env.SVC_SIGNIN_LIMITS),
    signinHashConcurrency: env.SVC_SIGNIN_HASH_CONCURRENCY
      ? int(env, 'SVC_SIGNIN_HASH_CONCURRENCY', 2, 1, 64)
      : undefined,
    secretKey,
    secretKeyFile: resolve(
      env.SVC_SECRET_KEY_FILE || resolve(dirname(server.dataDir ?? resolve('.svc/data')), 'secret-key'),
    ),
    quotas: quotas(env, {
      workspacesPerPrincipal: ['SVC_QUOTA_WORKSPACES_PER_PRINCIPAL', 10],
      membersPerWorkspace: ['SVC_QUOTA_MEMBERS_PER_WORKSPACE', 100],
      activeKeysPerServiceAccount: ['SVC_QUOTA_ACTIVE_KEYS_PER_SERVICE_ACCOUNT', 5],
    }),
  };
}

const SIGNIN_LIMIT_NAMES = ['address', 'account', 'failures'] as const;

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
