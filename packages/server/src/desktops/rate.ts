import { ApiError } from '../platform/errors.js';

/**
 * Requests a second per computer, in this replica (design §18): a fixed one-second window per
 * computer and kind. Past it, 429 `rate_limited` with `Retry-After: 1` and the policy's name.
 *
 * @example
 * const screens = new PerSecond('computer-screen', 10);
 * screens.take(computer.id); // throws the 429 on the 11th call within a second
 */
export class PerSecond {
  private windows = new Map<string, number>();
  private second = 0;

  constructor(
    readonly policy: string,
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): void {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.windows = new Map();
    }
    const used = (this.windows.get(key) ?? 0) + 1;
    this.windows.set(key, used);
    if (used > this.limit)
      throw new ApiError(
        'rate_limited',
        `at most ${this.limit} requests a second per computer (${this.policy})`,
        {
          details: { policy: this.policy, retry_after_seconds: 1 },
          headers: { 'retry-after': '1' },
        },
      );
  }
}
