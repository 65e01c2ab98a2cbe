/** Options of {@link SigninAttempts}. */
export interface SigninAttemptsOptions {
  /** Failed sign-ins allowed per account and client address within the window. Default 5. */
  maxFailures?: number;
  /** Default 15 minutes. */
  windowSeconds?: number;
  now?: () => number;
  /** Keys kept before expired ones are swept. Default 100 000. */
  maxKeys?: number;
}

interface Entry {
  failures: number;
  windowEnds: number;
}

/**
 * Limits password guessing per (account, client address): after `maxFailures` wrong passwords the
 * pair is refused, even with the right password, until the window that began with the first failure
 * ends; a success clears the count. Per account and address together, so an attacker cannot lock a
 * real user out from elsewhere. In memory, per replica (like the API's rate limiter): N replicas allow
 * up to N× the attempts.
 *
 * @example
 * const attempts = new SigninAttempts();
 * const wait = attempts.retryAfter(key); // seconds, or undefined when allowed
 * attempts.failed(key);
 */
export class SigninAttempts {
  private readonly entries = new Map<string, Entry>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly maxKeys: number;

  constructor(options: SigninAttemptsOptions = {}) {
    this.maxFailures = options.maxFailures ?? 5;
    this.windowMs = (options.windowSeconds ?? 15 * 60) * 1000;
    this.now = options.now ?? Date.now;
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  /** The key of an account and client address. */
  static key(username: string, address: string): string {
    return `${username}\u0000${address}`;
  }

  /** Seconds to wait before `key` may try again, or undefined when it may try now. */
  retryAfter(key: string): number | undefined {
    const entry = this.current(key);
    if (!entry || entry.failures < this.maxFailures) return undefined;
    return Math.max(1, Math.ceil((entry.windowEnds - this.now()) / 1000));
  }

  /** Counts a wrong password. */
  failed(key: string): void {
    const entry = this.current(key);
    if (entry) {
      entry.failures += 1;
      return;
    }
    if (this.entries.size >= this.maxKeys) this.sweep();
    this.entries.set(key, { failures: 1, windowEnds: this.now() + this.windowMs });
  }

  /** Clears the count after a successful sign-in. */
  succeeded(key: string): void {
    this.entries.delete(key);
  }

  private current(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.windowEnds <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.windowEnds <= now) this.entries.delete(key);
  }
}
