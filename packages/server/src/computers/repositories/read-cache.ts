/** The `NOTIFY` channel on which the database names each changed computer and its workspace (migration 022). */
export const COMPUTERS_CHANNEL = 'svc_computer_changes';

interface Entry {
  value: unknown;
  /** Whether a change of this computer can change the value; absent: a change of any computer can. */
  touches: ((computerId: string) => boolean) | undefined;
  /** Rows it holds (a page counts each of its rows), for the bound on memory. */
  weight: number;
  until: number;
}

/** Changes of one workspace remembered while loads are under way, before they count as the whole workspace's. */
const MAX_TOUCHED = 256;

interface Flight {
  promise: Promise<unknown>;
  /** Something of its workspace changed since it began: a read arriving now cannot share it. */
  stale: boolean;
}

/**
 * A {@link COMPUTERS_CHANNEL} payload, `<workspace id> <computer id>`; a payload of a workspace alone
 * says every computer of it may have changed.
 */
export function parseComputerChange(payload: string): { workspaceId: string; computerId?: string } {
  const space = payload.indexOf(' ');
  return space < 0
    ? { workspaceId: payload }
    : { workspaceId: payload.slice(0, space), computerId: payload.slice(space + 1) };
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
 * - Triggers (migrations 010 and 022) `NOTIFY svc_computer_changes, '<workspace id> <computer id>'` for every
 *   inserted, changed or deleted computer, whoever wrote it (handlers, the worker, housekeeping, the
 *   Docker reconciler, another replica); the listener drops the entries of that workspace the change
 *   can touch (each entry says which, `touches`; one that does not say is dropped by every change),
 *   so a workspace that changes all the time keeps serving what did not change. A payload without a
 *   computer drops every entry of the workspace.
 * - A hit waits for {@link Barrier}: on PostgreSQL one `SELECT 1` on the listening connection, shared by
 *   every read that arrives while it runs (so under load many reads share one round trip, and none
 *   is served from before a change it could have seen); on PGlite the commit itself delivers the
 *   notification, so nothing. If the barrier fails (the listening connection is down), the cache is
 *   cleared and the read goes to the database.
 * - A load that raced a change it can be touched by is not stored (changes heard while loads are under
 *   way are remembered with their epoch and computer); one that raced only other computers' changes is.
 * - Reads of a key that arrive while a load of it is under way share that load, after the barrier,
 *   unless something of the workspace changed since it began (then they load on their own): a page
 *   dropped by a change costs one statement, not one per waiting reader. A hit answers what the
 *   cache holds for its key once the barrier passed (the entry it found, or one stored since); if
 *   that was dropped meanwhile, it shares a load begun since it arrived, if there is one.
 * - Entries live at most `ttlMs` (default 1 s), which bounds anything time-dependent in a row's
 *   visibility (a deleted computer answers by id for 7 days). The cache holds at most `maxRows` rows
 *   (default 20,000); past that it starts again from empty.
 *
 * @example
 * const reads = new ReadCache(() => db.notificationBarrier());
 * await db.listen(COMPUTERS_CHANNEL, (payload) => { const c = parseComputerChange(payload); reads.invalidate(c.workspaceId, c.computerId); }, { onGap: () => reads.clear() });
 * const row = await reads.get(workspaceId, `id:${id}`, () => loadRow(db, workspaceId, id), { touches: (row) => (changed) => changed === row.id });
 */
export class ReadCache {
  /** workspace id → key → entry. */
  readonly #entries = new Map<string, Map<string, Entry>>();
  /** workspace id → key → the load under way, which reads arriving meanwhile share. */
  readonly #flights = new Map<string, Map<string, Flight>>();
  #rows = 0;
  #epoch = 0;
  #cleared = 0;
  /**
   * The changes heard while loads were under way, per workspace: at which epoch, and of which computer
   * (none: the whole workspace). At most {@link MAX_TOUCHED} a workspace; past that, one for all.
   */
  readonly #touched = new Map<string, { epoch: number; computerId: string | undefined }[]>();
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
   * thrown error (404) is never cached. `weight`: how many rows the value holds (default 1);
   * `touches`: which computers' changes can change the value (default: any computer's).
   */
  async get<T>(
    workspaceId: string,
    key: string,
    load: () => Promise<T>,
    options: { weight?: (value: T) => number; touches?: (value: T) => (computerId: string) => boolean } = {},
  ): Promise<T> {
    if (!this.#enabled) return load();
    const live = this.#entries.get(workspaceId)?.get(key);
    const hit = live && live.until > this.#now() ? live : undefined;
    const arrived = this.#flights.get(workspaceId)?.get(key);
    const flight = hit ? undefined : arrived;
    if (hit || (flight && !flight.stale)) {
      let heard = true;
      await this.#barrier().catch(() => {
        heard = false;
        this.clear();
      });
      if (heard) {
        // An entry held after the barrier has heard every change committed before this read began:
        // one that could touch it dropped it, or kept it from being stored. So it answers, whether it
        // is the entry this read found or a newer one stored meanwhile (under load, pages are stored
        // again all the time: taking only the one found sent every reader to the database).
        const held = this.#entries.get(workspaceId)?.get(key);
        if (held && held.until > this.#now()) return held.value as T;
        // A load of the same key under way, and nothing of the workspace changed since it began: its
        // statement sees everything committed before this read, so its answer is this read's too.
        if (flight && !flight.stale) return flight.promise as Promise<T>;
        // A load begun after this read arrived (it was dropped while the barrier ran): its statement
        // is later than this read's start, whatever changed since. The readers the drop found share it.
        const later = this.#flights.get(workspaceId)?.get(key);
        if (later && later !== arrived) return later.promise as Promise<T>;
      }
    }
    const started = this.#epoch;
    const now = this.#now();
    this.#loading++;
    const own: Flight = { promise: load(), stale: false };
    let flights = this.#flights.get(workspaceId);
    if (!flights) {
      flights = new Map();
      this.#flights.set(workspaceId, flights);
    }
    flights.set(key, own);
    let value: T;
    try {
      value = (await own.promise) as T;
    } finally {
      this.#loading--;
      const held = this.#flights.get(workspaceId);
      if (held?.get(key) === own) {
        held.delete(key);
        if (held.size === 0) this.#flights.delete(workspaceId);
      }
    }
    // Stored unless a change heard while it loaded can touch it (a change of another computer cannot).
    const touches = options.touches?.(value);
    const changed =
      this.#cleared > started ||
      (this.#touched.get(workspaceId) ?? []).some(
        (change) =>
          change.epoch > started &&
          (change.computerId === undefined || touches === undefined || touches(change.computerId)),
      );
    if (!changed)
      this.#store(workspaceId, key, {
        value,
        weight: options.weight?.(value) ?? 1,
        touches,
        until: now + this.#ttlMs,
      });
    if (this.#loading === 0) this.#touched.clear();
    return value;
  }

  /**
   * Drops the workspace's entries a change of `computerId` can touch, or every entry of the workspace
   * without one (a {@link COMPUTERS_CHANNEL} payload, {@link parseComputerChange}).
   */
  invalidate(workspaceId: string, computerId?: string): void {
    this.#epoch++;
    if (this.#loading > 0) {
      const heard = this.#touched.get(workspaceId) ?? [];
      if (heard.length >= MAX_TOUCHED)
        heard.splice(0, heard.length, { epoch: this.#epoch, computerId: undefined });
      else heard.push({ epoch: this.#epoch, computerId });
      this.#touched.set(workspaceId, heard);
    }
    for (const flight of this.#flights.get(workspaceId)?.values() ?? []) flight.stale = true;
    const entries = this.#entries.get(workspaceId);
    if (!entries) return;
    for (const [key, entry] of entries) {
      if (computerId !== undefined && entry.touches && !entry.touches(computerId)) continue;
      this.#rows -= entry.weight;
      entries.delete(key);
    }
    if (entries.size === 0) this.#entries.delete(workspaceId);
  }

  /** Forgets everything (notifications may have been lost). */
  clear(): void {
    this.#cleared = ++this.#epoch;
    for (const flights of this.#flights.values()) for (const flight of flights.values()) flight.stale = true;
    this.#entries.clear();
    this.#rows = 0;
  }

  #store(workspaceId: string, key: string, entry: Entry): void {
    if (this.#rows + entry.weight > this.#maxRows) {
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
    entries.set(key, entry);
    this.#rows += entry.weight;
  }
}
