import type { Principal } from './authenticate.js';

/**
 * Remembers who a Bearer token belongs to (the principal, and for `GET /me` its workspaces and roles)
 * between requests, for the embedded engine only.
 *
 * PGlite lives inside this one process, so every write that could change the answer (a membership, a
 * role, a revoked key, a deleted service account) is a mutating API request of this process: the app
 * calls {@link invalidate} after each one, and the next request reads the database again — revocation
 * still takes effect on the next request. A read that raced a write is not stored (the generation moved
 * on while it ran). Entries also age out after `ttlMs`, which bounds how late a key's own `expires_at`
 * is noticed. With PostgreSQL other replicas write too, so the app does not use this cache there.
 *
 * @example
 * const cache = new PrincipalCache();
 * const principal = await cache.get(authorization, () => authenticate(db, tokens, authorization));
 * cache.invalidate(); // after a mutating request
 */
export class PrincipalCache {
  #generation = 0;
  readonly #entries = new Map<string, { principal: Principal; generation: number; until: number }>();

  constructor(private readonly options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {}

  /** Forgets everything: called after every mutating request. */
  invalidate(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** The cached principal for `key`, or `load()`'s (a refusal is thrown, never cached). */
  async get(key: string, load: () => Promise<Principal>): Promise<Principal> {
    const now = (this.options.now ?? Date.now)();
    const hit = this.#entries.get(key);
    if (hit && hit.generation === this.#generation && hit.until > now) return hit.principal;
    const generation = this.#generation;
    const principal = await load();
    if (generation === this.#generation) {
      if (this.#entries.size >= (this.options.maxEntries ?? 10_000)) this.#entries.clear();
      this.#entries.set(key, { principal, generation, until: now + (this.options.ttlMs ?? 1000) });
    }
    return principal;
  }
}
