import type { Counter } from '../../platform/ratelimit-counter.js';
import type { CounterStore } from '../../platform/ratelimit-store.js';
import { DEFAULT_SIGNIN_LIMITS, type SigninAttemptsOptions } from '../config.js';

export type { SigninAttemptsOptions } from '../config.js';

/** Which limit refused an attempt: the policy names of `details.policy` (the spec's `^[a-z][a-z0-9-]*$`). */
export type SigninPolicy = 'signin-address' | 'signin-account' | 'signin-failures';

/** An attempt that may go on to the password check; settle it with its outcome. */
export interface Reservation {
  allowed: true;
  /** The password was right: the reserved failure points are given back and the pair's count cleared. */
  succeeded(): Promise<void>;
  /** The password was wrong: the reserved points stay counted. */
  failed(): Promise<void>;
  /** The check did not happen (e.g. no hashing slot): the reserved failure points are given back. */
  cancel(): Promise<void>;
}

/** An attempt refused before any password check. */
export interface Refusal {
  allowed: false;
  policy: SigninPolicy;
  retryAfterSeconds: number;
}

/**
 * Limits password guessing on the sign-in form, over shared atomic counters (PostgreSQL when the
 * server runs on it, so every replica sees one count; memory on PGlite):
 *
 * - per client address: every post counts (bounds the work one client can cause);
 * - per account and address: `maxFailures` wrong passwords per window, then even the right password
 *   is refused until the window ends (the window begins with the first failure);
 * - per account, from all addresses together: a ceiling on distributed guessing.
 *
 * The check is a reservation: a failure point is counted BEFORE the password is checked, in the same
 * atomic step that decides, so sixteen guesses sent at once get `maxFailures` checks, not sixteen. A
 * right password gives the points back and clears the pair.
 *
 * @example
 * const attempts = new SigninAttempts(counterStore(db));
 * const attempt = await attempts.reserve(usernameOf(email), address);
 * if (!attempt.allowed) return tooMany(attempt.retryAfterSeconds);
 * (await checkLocalPassword(db, email, password)) ? await attempt.succeeded() : await attempt.failed();
 */
export class SigninAttempts {
  private readonly address: Counter;
  private readonly pair: Counter;
  private readonly account: Counter;

  constructor(store: CounterStore, options: SigninAttemptsOptions = {}) {
    const address = options.address ?? DEFAULT_SIGNIN_LIMITS.address;
    const account = options.account ?? DEFAULT_SIGNIN_LIMITS.account;
    this.address = store({
      name: 'signin_address',
      points: address.quota,
      durationSeconds: address.windowSeconds,
    });
    this.pair = store({
      name: 'signin_failures',
      points: options.maxFailures ?? DEFAULT_SIGNIN_LIMITS.maxFailures,
      durationSeconds: options.windowSeconds ?? DEFAULT_SIGNIN_LIMITS.windowSeconds,
    });
    this.account = store({
      name: 'signin_account',
      points: account.quota,
      durationSeconds: account.windowSeconds,
    });
  }

  /** Counts one attempt of `username` from `address` and decides, atomically, whether it may be checked. */
  async reserve(username: string, address: string): Promise<Reservation | Refusal> {
    const byAddress = await this.address.consume(address);
    if (!byAddress.allowed) return refusal('signin-address', byAddress.msBeforeNext);
    const pairKey = JSON.stringify([username, address]);
    const byPair = await this.pair.consume(pairKey);
    if (!byPair.allowed) return refusal('signin-failures', byPair.msBeforeNext);
    const byAccount = await this.account.consume(username);
    if (!byAccount.allowed) {
      await this.pair.refund(pairKey);
      return refusal('signin-account', byAccount.msBeforeNext);
    }
    return {
      allowed: true,
      succeeded: async () => {
        await Promise.all([this.pair.reset(pairKey), this.account.refund(username)]);
      },
      failed: async () => {},
      cancel: async () => {
        await Promise.all([this.pair.refund(pairKey), this.account.refund(username)]);
      },
    };
  }
}

function refusal(policy: SigninPolicy, msBeforeNext: number): Refusal {
  return { allowed: false, policy, retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
}
