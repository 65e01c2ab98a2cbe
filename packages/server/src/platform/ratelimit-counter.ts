// What a counter of the rate limits and throttles is, whatever stores it (ratelimit-store.ts) or
// spends its points in blocks (ratelimit-lease.ts).

/** Where a key stands after a consume (or a refusal). */
export interface CounterState {
  allowed: boolean;
  remaining: number;
  /** Milliseconds until the key's window ends. */
  msBeforeNext: number;
  /** Points counted in the key's window, this consume's included (when the store says). */
  consumed?: number;
}

/**
 * One atomic counter per key (rate-limiter-flexible): `consume` counts a point and decides in the
 * same step, so concurrent requests never all pass a check that read the count before it changed.
 */
export interface Counter {
  consume(key: string, points?: number): Promise<CounterState>;
  /** Gives `points` back (a reserved attempt that turned out not to count). */
  refund(key: string, points?: number): Promise<void>;
  /** Forgets the key (a success clears a failure count). */
  reset(key: string): Promise<void>;
}
