import type { Principal } from './authenticate.js';

/** The `NOTIFY` channel on which the database announces changes to principals, keys and memberships. */
export const ACCESS_CHANNEL = 'svc_access';

interface Entry {
  principal: Principal;
  until: number;
}

/**
 * Remembers, per replica and for at most `ttlMs` (default 1 s), who a principal is, whether the key
 * its token was exchanged for is still usable, and its workspaces with its role in each — so an
 * authenticated read needs no database round trip for identity or permission.
 *
 * Targeted invalidation: triggers (migration 007) announce on {@link ACCESS_CHANNEL} only what
 * changed — `p:<principal id>` (the principal, one of its keys, one of its memberships) or
 * `w:<workspace id>` (a workspace renamed or deleted) — and every replica's listener drops just the
 * entries concerned. The replica that made a change waits for its own announcement before answering
 * (`Database.notificationBarrier`), so there a revocation holds from the next request; other replicas
 * hear it within milliseconds, and the TTL bounds the rare case of a lost notification (`clear()` runs
 * when the listening connection drops). A load that raced an invalidation of what it read is not
 * stored. Refusals are never cached.
 *
 * @example
 * const cache = new PrincipalCache({ ttlMs: 1000 });
 * await db.listen(ACCESS_CHANNEL, (payload) => cache.notified(payload), { onGap: () => cache.clear() });
 * const principal = await cache.get(claims.sub, claims.key_id, () => loadPrincipal(db, claims));
 */
export class PrincipalCache {
  /** principal id → key id (`''` for a token without one) → entry. */
  readonly #entries = new Map<string, Map<string, Entry>>();
  #size = 0;
  /** Bumped by every invalidation; `#touched` says when each target was last invalidated. */
  #epoch = 0;
  #cleared = 0;
  readonly #touched = new Map<string, number>();
  #loading = 0;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? 1000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** How many tokens' principals are held (tests). */
  get size(): number {
    return this.#size;
  }

  /** The cached principal for this principal and key, or `load()`'s (a refusal is thrown, never cached). */
  async get(
    principalId: string,
    keyId: string | undefined,
    load: () => Promise<Principal>,
  ): Promise<Principal> {
    const now = this.#now();
    const hit = this.#entries.get(principalId)?.get(keyId ?? '');
    if (hit && hit.until > now) return hit.principal;
    const started = this.#epoch;
    this.#loading++;
    let principal: Principal;
    try {
      principal = await load();
    } finally {
      this.#loading--;
    }
    if (!this.#invalidatedSince(started, principal)) this.#store(principal, keyId ?? '', now + this.#ttlMs);
    // Nothing in flight can be compared with older invalidations any more: forget them.
    if (this.#loading === 0) this.#touched.clear();
    return principal;
  }

  /** Handles one `NOTIFY svc_access` payload: `p:<principal id>` or `w:<workspace id>`; anything else clears. */
  notified(payload: string): void {
    if (payload.startsWith('p:')) this.invalidatePrincipal(payload.slice(2));
    else if (payload.startsWith('w:')) this.invalidateWorkspace(payload.slice(2));
    else this.clear();
  }

  /** Drops every entry of one principal (all its tokens). */
  invalidatePrincipal(id: string): void {
    this.#touch(`p:${id}`);
    const tokens = this.#entries.get(id);
    if (!tokens) return;
    this.#size -= tokens.size;
    this.#entries.delete(id);
  }

  /** Drops every entry that lists the workspace among its memberships. */
  invalidateWorkspace(id: string): void {
    this.#touch(`w:${id}`);
    for (const [principalId, tokens] of this.#entries) {
      for (const [keyId, entry] of tokens) {
        if (entry.principal.memberships?.some((m) => m.workspace.id === id)) {
          tokens.delete(keyId);
          this.#size--;
        }
      }
      if (tokens.size === 0) this.#entries.delete(principalId);
    }
  }

  /** Forgets everything (notifications may have been lost). */
  clear(): void {
    this.#cleared = ++this.#epoch;
    this.#entries.clear();
    this.#size = 0;
  }

  #touch(target: string): void {
    this.#epoch++;
    if (this.#loading > 0) this.#touched.set(target, this.#epoch);
  }

  #invalidatedSince(started: number, principal: Principal): boolean {
    if (this.#epoch === started) return false;
    if (this.#cleared > started) return true;
    if ((this.#touched.get(`p:${principal.id}`) ?? 0) > started) return true;
    return (principal.memberships ?? []).some(
      (m) => (this.#touched.get(`w:${m.workspace.id}`) ?? 0) > started,
    );
  }

  #store(principal: Principal, keyId: string, until: number): void {
    if (this.#size >= this.#maxEntries) {
      this.#entries.clear();
      this.#size = 0;
    }
    let tokens = this.#entries.get(principal.id);
    if (!tokens) {
      tokens = new Map();
      this.#entries.set(principal.id, tokens);
    }
    if (!tokens.has(keyId)) this.#size++;
    tokens.set(keyId, { principal, until });
  }
}
