/** The `NOTIFY` channel on which the database names the workspace whose computers changed. */
export const COMPUTERS_CHANNEL = 'svc_computers';

interface Entry {
  value: unknown;
  /** Rows it holds (a page counts each of its rows), for the bound on memory. */
  weight: number;
  until: number;
}

/**
 * What a row read from this replica's cache must wait for first: every change committed before the
 * read began must have reached this replica's listener (`Database.notificationBarrier`). Rejects when
 * the listening connection is down.
 */
export type Barrier = () => Promise<void>;

/**
 * Rows of a workspace's computers (one computer, one list page), cached per replica so a repeated
 * read costs no statement of its own — and never stale: a hit is served only after a notification
 * barrier, so every change committed anywhere before the read began has dropped what it touched.
 *
 * - Triggers (migration 010) `NOTIFY svc_computers, '<workspace id>'` for every inserted, changed or
 *   deleted computer, whoever wrote it (handlers, the worker, housekeeping, the Docker reconciler,
 *   another replica); the listener drops every entry of that workspace.
 * - A hit waits for {@link Barrier}: on PostgreSQL one `SELECT 1` on the listening connection, shared by
 *   every read that arrives while it runs (so under load many reads share one round trip, and none
 *   is served from before a change it could have seen); on PGlite the commit itself delivers the
 *   notification, so nothing. If the barrier fails (the listening connection is down), the cache is
 *   cleared and the read goes to the database.
 * - A load that raced a change of its workspace is not stored (an epoch per workspace).
 * - Entries live at most `ttlMs` (default 1 s), which bounds anything time-dependent in a row's
 *   visibility (a deleted computer answers by id for 7 days). The cache holds at most `maxRows` rows
 *   (default 20,000); past that it starts again from empty.
 *
 * @example
 * const reads = new ReadCache(() => db.notificationBarrier());
 * await db.listen(COMPUTERS_CHANNEL, (workspaceId) => reads.invalidate(workspaceId), { onGap: () => reads.clear() });
 * const row = await reads.get(workspaceId, `id:${id}`, () => loadRow(db, workspaceId, id));
 */
export class ReadCache {
  /** workspace id → key → entry. */
  readonly #entries = new Map<string, Map<string, Entry>>();
  #rows = 0;
  #epoch = 0;
  #cleared = 0;
  /** When each workspace was last invalidated, kept while loads are in flight. */
  readonly #touched = new Map<string, number>();
  #loading = 0;
  readonly #barrier: Barrier;
  readonly #ttlMs: number;
  readonly #maxRows: number;
  readonly #now: () => number;
  readonly #enabled: boolean;

  /** `enabled: false` (`SVC_READ_CACHE=off`): every read goes to the database, nothing is kept. */
  constructor(
    barrier: Barrier,
    options: { ttlMs?: number; maxRows?: number; now?: () => number; enabled?: boolean } = {},
  ) {
    this.#barrier = barrier;
    this.#enabled = options.enabled ?? true;
    this.#ttlMs = options.ttlMs ?? 1000;
    this.#maxRows = options.maxRows ?? 20_000;
    this.#now = options.now ?? Date.now;
  }

  /** Rows held (tests). */
  get rows(): number {
    return this.#rows;
  }

  /**
   * The value cached for `key` in the workspace, once no change committed before this call can
   * still be on its way; else `load()`'s, stored unless the workspace changed while it loaded. A
   * thrown error (404) is never cached. `weight`: how many rows the value holds (default 1).
   */
  async get<T>(
    workspaceId: string,
    key: string,
    load: () => Promise<T>,
    weight: (value: T) => number = () => 1,
  ): Promise<T> {
    if (!this.#enabled) return load();
    const hit = this.#entries.get(workspaceId)?.get(key);
    if (hit && hit.until > this.#now()) {
      let heard = true;
      await this.#barrier().catch(() => {
        heard = false;
        this.clear();
      });
      // Still there after the barrier: nothing committed before this read touched the workspace.
      if (heard && this.#entries.get(workspaceId)?.get(key) === hit) return hit.value as T;
    }
    const started = this.#epoch;
    const now = this.#now();
    this.#loading++;
    let value: T;
    try {
      value = await load();
    } finally {
      this.#loading--;
    }
    const changed = this.#cleared > started || (this.#touched.get(workspaceId) ?? 0) > started;
    if (!changed) this.#store(workspaceId, key, value, weight(value), now + this.#ttlMs);
    if (this.#loading === 0) this.#touched.clear();
    return value;
  }

  /** Drops every entry of the workspace (a `NOTIFY svc_computers` payload). */
  invalidate(workspaceId: string): void {
    this.#epoch++;
    if (this.#loading > 0) this.#touched.set(workspaceId, this.#epoch);
    const entries = this.#entries.get(workspaceId);
    if (!entries) return;
    for (const entry of entries.values()) this.#rows -= entry.weight;
    this.#entries.delete(workspaceId);
  }

  /** Forgets everything (notifications may have been lost). */
  clear(): void {
    this.#cleared = ++this.#epoch;
    this.#entries.clear();
    this.#rows = 0;
  }

  #store(workspaceId: string, key: string, value: unknown, weight: number, until: number): void {
    if (this.#rows + weight > this.#maxRows) {
      this.#entries.clear();
      this.#rows = 0;
    }
    let entries = this.#entries.get(workspaceId);
    if (!entries) {
      entries = new Map();
      this.#entries.set(workspaceId, entries);
    }
    const old = entries.get(key);
    if (old) this.#rows -= old.weight;
    entries.set(key, { value, weight, until });
    this.#rows += weight;
  }
}
