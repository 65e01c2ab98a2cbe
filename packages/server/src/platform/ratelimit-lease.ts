import type { Counter, CounterState } from './ratelimit-counter.js';

/** The share of a window's budget one replica takes from the shared store at once. */
const LEASE_SHARE = 100;
/** The largest block: what a replica that dies with its blocks unspent can take from a window. */
const MAX_BLOCK = 1000;
/** Keys held at most; past it, a key without a lease counts straight in the store. */
const MAX_LEASED_KEYS = 10_000;

interface Lease {
  /** Points taken from the store and not yet spent here. */
  left: number;
  /** What the store had left when the block was taken (other replicas may spend it meanwhile). */
  storeRemaining: number;
  /** When the store's window ends (ms since the epoch): the lease is worthless after it. */
  until: number;
  /** The store refused this window: answered again, without asking, until the window ends. */
  refusal?: CounterState | undefined;
}

/**
 * A counter that takes its points from the shared store in blocks of `points / LEASE_SHARE` (at most
 * {@link MAX_BLOCK}) and spends them in this process, so a busy key costs the database one statement
 * per block instead of one per request (a single row every request of one client updates: the hot
 * row of a busy client).
 *
 * Never more than the budget: a block is counted in the store when it is taken, so every replica
 * together admits at most `points` per window. The price is the other way round: points a replica
 * leased and did not spend are lost to the others until the window ends, so with R replicas a key may
 * be refused up to `(R - 1) × (block - 1)` requests early (1 % of the budget per other replica). A
 * budget under `LEASE_SHARE × 2` points leases nothing, and counts exactly as the store does.
 *
 * @example
 * const counter = leased(storeCounter, 600); // blocks of 6
 * const state = await counter.consume('principal:abc');
 */
export function leased(store: Counter, points: number, clock: () => number = Date.now): Counter {
  const block = Math.min(MAX_BLOCK, Math.floor(points / LEASE_SHARE));
  if (block < 2) return store;
  const leases = new Map<string, Lease>();
  const taking = new Map<string, Promise<CounterState | undefined>>();

  const fresh = (key: string, now: number): Lease | undefined => {
    const lease = leases.get(key);
    if (lease && lease.until <= now) {
      leases.delete(key);
      return undefined;
    }
    return lease;
  };

  const spend = (lease: Lease, wanted: number, now: number): CounterState => {
    lease.left -= wanted;
    return { allowed: true, remaining: lease.storeRemaining + lease.left, msBeforeNext: lease.until - now };
  };

  const keep = (key: string, lease: Lease) => {
    const now = clock();
    const held = fresh(key, now);
    if (held) {
      held.left += lease.left;
      held.storeRemaining = Math.min(held.storeRemaining, lease.storeRemaining);
      held.refusal = lease.refusal;
      return;
    }
    if (leases.size >= MAX_LEASED_KEYS)
      for (const [other, value] of leases) if (value.until <= now) leases.delete(other);
    leases.set(key, lease);
  };

  /**
   * Takes one block from the store, or what is left of the window's budget; answers the store's
   * refusal when nothing is left. A refusal is remembered until the window ends, so a client over
   * its budget costs no statement per request either.
   */
  const take = async (key: string): Promise<CounterState | undefined> => {
    const counted = await store.consume(key, block);
    const until = clock() + counted.msBeforeNext;
    if (counted.allowed) {
      keep(key, { left: block, storeRemaining: counted.remaining, until });
      return undefined;
    }
    // Over the budget: the store counted the whole block. Keep what fit, give back the rest.
    const before = (counted.consumed ?? points + block) - block;
    const fits = Math.min(block, Math.max(0, points - before));
    if (fits < block) await store.refund(key, block - fits).catch(() => {});
    keep(key, { left: fits, storeRemaining: 0, until, refusal: fits > 0 ? undefined : counted });
    return fits > 0 ? undefined : counted;
  };

  return {
    async consume(key, wanted = 1) {
      if (wanted > block || (leases.size >= MAX_LEASED_KEYS && !leases.has(key)))
        return store.consume(key, wanted);
      for (let attempt = 0; attempt < 3; attempt++) {
        const now = clock();
        const lease = fresh(key, now);
        if (lease && lease.left >= wanted) return spend(lease, wanted, now);
        if (lease?.refusal) return { ...lease.refusal, msBeforeNext: lease.until - now };
        // One block at a time per key: concurrent requests wait for it rather than each taking one.
        const pending = taking.get(key);
        if (pending) {
          await pending.catch(() => {});
          continue;
        }
        const mine = take(key).finally(() => taking.delete(key));
        taking.set(key, mine);
        const refused = await mine;
        if (refused) return refused;
      }
      // Blocks keep running out under us (a crowd on one key): count this one in the store.
      return store.consume(key, wanted);
    },
    async refund(key, given = 1) {
      const lease = fresh(key, clock());
      if (!lease) return store.refund(key, given);
      lease.left += given;
      lease.refusal = undefined;
    },
    async reset(key) {
      leases.delete(key);
      await store.reset(key);
    },
  };
}
