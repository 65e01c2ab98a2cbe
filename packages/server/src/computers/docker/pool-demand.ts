/** What a container takes to make before anything is measured (create, start, its exec agent). */
const FIRST_LEAD_MS = 1000;
/** Weight of the newest make time in the running estimate of the lead time. */
const LEAD_WEIGHT = 0.3;
/** The shortest window claims are counted in: a burst shorter than this is a rate over this long. */
const MIN_WINDOW_MS = 1000;

/**
 * How many ready containers of one kind (`image:size`) the warm pool keeps beyond its configured count,
 * from what creates ask of it: the claims that will come while one container is being made. The pool
 * follows demand: at `r` claims a second and `L` seconds to make one, `floor(r × L)` more are kept
 * (each refilled the moment it is claimed), so a create finds one ready as long as the Engine keeps up,
 * and a create now and then (`r × L` under 1: the refill is back before the next) costs nothing more;
 * when the claims stop, the extra goes back down by one every `decayMs`. Pure: time comes from `now`.
 *
 * @example
 * const demand = new PoolDemand();
 * demand.asked('busybox:small');            // a create asked the pool for one
 * demand.made('busybox:small', 420);        // one was made in 420 ms
 * const extra = demand.extra('busybox:small');
 */
export class PoolDemand {
  private readonly now: () => number;
  private readonly decayMs: number;
  private readonly kinds = new Map<
    string,
    { asks: number[]; leadMs: number; extra: number; extraAt: number }
  >();

  constructor(options: { now?: () => number; decayMs?: number } = {}) {
    this.now = options.now ?? Date.now;
    this.decayMs = options.decayMs ?? 10_000;
  }

  /** A create asked the pool for a container of `kind` (whether one was ready or not). */
  asked(kind: string): void {
    const state = this.kind(kind);
    state.asks.push(this.now());
    if (state.asks.length > 1000) state.asks.splice(0, state.asks.length - 1000);
  }

  /** A container of `kind` took `ms` to make, start and be ready. */
  made(kind: string, ms: number): void {
    const state = this.kind(kind);
    state.leadMs = state.leadMs * (1 - LEAD_WEIGHT) + ms * LEAD_WEIGHT;
  }

  /** The containers of `kind` to keep beyond the configured count now. */
  extra(kind: string): number {
    const state = this.kind(kind);
    const now = this.now();
    // Claims are counted over a few lead times: long enough to see a rate, short enough to follow it.
    const windowMs = Math.max(MIN_WINDOW_MS, 4 * state.leadMs);
    while (state.asks.length > 0 && (state.asks[0] ?? now) <= now - windowMs) state.asks.shift();
    const wanted = Math.floor((state.asks.length / windowMs) * state.leadMs);
    if (wanted >= state.extra) {
      state.extra = wanted;
      state.extraAt = now;
    } else if (now - state.extraAt >= this.decayMs) {
      // Down by one per decayMs: a pause between two bursts does not empty the pool.
      const steps = Math.floor((now - state.extraAt) / this.decayMs);
      state.extra = Math.max(wanted, state.extra - steps);
      state.extraAt += steps * this.decayMs;
    }
    return state.extra;
  }

  private kind(kind: string) {
    let state = this.kinds.get(kind);
    if (!state) {
      state = { asks: [], leadMs: FIRST_LEAD_MS, extra: 0, extraAt: this.now() };
      this.kinds.set(kind, state);
    }
    return state;
  }
}
