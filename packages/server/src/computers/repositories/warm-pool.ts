import type { Database, Queryable } from '../../platform/db/database.js';

// The statements of the Docker driver's warm pool (design §4.3; migration 018).

/** One pooled container as the database knows it. */
export interface WarmContainerRow {
  name: string;
  instance: string;
  image: string;
  size: string;
  state: 'creating' | 'ready' | 'claimed';
  container_id: string | null;
  computer_id: string | null;
  updated_at: Date;
}

/**
 * Reserves places in the pool for `image` at `size`, up to `target` unclaimed containers (`creating`
 * and `ready` both count) and `maxTotal` unclaimed containers of the instance in all: inserts one
 * `creating` row per place, named by `nameOf`, and answers the names. Under a transaction-scoped
 * advisory lock, so replicas topping the pool up at once never reserve more than the target together.
 *
 * @example
 * const names = await reservePoolPlaces(db, { instance: 'default', image: 'busybox', size: 'small', target: 2, maxTotal: 16 }, poolName);
 */
export async function reservePoolPlaces(
  db: Database,
  place: {
    instance: string;
    /** The host the pool is on (design §4.4); null: the pool of the one Engine of a deployment without hosts. */
    hostId?: string | null;
    image: string;
    size: string;
    target: number;
    maxTotal: number;
    /** The most places this call reserves (the fills its caller may run at once); default no bound. */
    atMost?: number;
  },
  nameOf: () => string,
): Promise<string[]> {
  const hostId = place.hostId ?? null;
  return db.transaction(async (tx) => {
    await tx.query(
      `SELECT pg_advisory_xact_lock(hashtext('svc.warm_pool.' || $1 || '@' || coalesce($2, '')))`,
      [place.instance, hostId],
    );
    const { rows } = await tx.query<{ mine: number; total: number }>(
      `SELECT count(*) FILTER (WHERE image = $2 AND size = $3)::int AS mine, count(*)::int AS total
         FROM warm_containers WHERE instance = $1 AND host_id IS NOT DISTINCT FROM $4 AND state <> 'claimed'`,
      [place.instance, place.image, place.size, hostId],
    );
    const { mine = 0, total = 0 } = rows[0] ?? {};
    const wanted = Math.max(
      0,
      Math.min(place.target - mine, place.maxTotal - total, place.atMost ?? Number.POSITIVE_INFINITY),
    );
    const names = Array.from({ length: wanted }, nameOf);
    for (const name of names)
      await tx.query(
        `INSERT INTO warm_containers (name, instance, image, size, state, host_id) VALUES ($1, $2, $3, $4, 'creating', $5)`,
        [name, place.instance, place.image, place.size, hostId],
      );
    return names;
  });
}

/** A `creating` place whose container now runs: `ready`, with the Engine's id. False when the row is gone. */
export async function markPoolReady(db: Queryable, name: string, containerId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE warm_containers SET state = 'ready', container_id = $2, updated_at = now()
      WHERE name = $1 AND state = 'creating'`,
    [name, containerId],
  );
  return rowCount === 1;
}

/**
 * Claims one ready container of `image` at `size` for `computerId`, or answers the one it claimed
 * already (a create run again after a takeover). One statement, `FOR UPDATE SKIP LOCKED`: two
 * creates never claim the same container, and a claimed row is never ready again.
 *
 * @example
 * const claimed = await claimPoolContainer(db, { instance, image: 'busybox', size: 'small' }, computer.id);
 */
export async function claimPoolContainer(
  db: Queryable,
  kind: { instance: string; hostId?: string | null; image: string; size: string },
  computerId: string,
): Promise<{ name: string; container_id: string } | undefined> {
  const claim = db.query<{ name: string; container_id: string }>(
    `UPDATE warm_containers SET state = 'claimed', computer_id = $4, updated_at = now()
      WHERE name = (SELECT name FROM warm_containers
                     WHERE instance = $1 AND image = $2 AND size = $3 AND state = 'ready'
                       AND host_id IS NOT DISTINCT FROM $5
                     ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        AND state = 'ready'
      RETURNING name, container_id`,
    [kind.instance, kind.image, kind.size, computerId, kind.hostId ?? null],
  );
  try {
    return (await claim).rows[0];
  } catch (error) {
    // 23505: this computer holds a claim already (computer_id is unique): the same create, run again.
    if ((error as { code?: string }).code !== '23505') throw error;
    return poolClaimOf(db, computerId);
  }
}

/** The container `computerId` claimed from the pool, if it did. */
export async function poolClaimOf(
  db: Queryable,
  computerId: string,
): Promise<{ name: string; container_id: string } | undefined> {
  const { rows } = await db.query<{ name: string; container_id: string }>(
    `SELECT name, container_id FROM warm_containers WHERE computer_id = $1 AND state = 'claimed'`,
    [computerId],
  );
  return rows[0];
}

/**
 * Forgets a pooled container that no computer claimed (to be removed, or never made); false when it
 * was claimed meanwhile (then it is that computer's, and stays).
 */
export async function forgetPoolContainer(db: Queryable, name: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM warm_containers WHERE name = $1 AND state <> 'claimed'`, [
    name,
  ]);
  return rowCount === 1;
}

/** Forgets the claim of a computer whose container is removed. */
export async function forgetPoolClaim(db: Queryable, computerId: string): Promise<void> {
  await db.query(`DELETE FROM warm_containers WHERE computer_id = $1`, [computerId]);
}

/**
 * The instance's unclaimed rows (`creating` and `ready`): a few dozen at most, bounded by
 * `SVC_POOL_MAX_CONTAINERS`.
 */
export async function unclaimedPoolRows(
  db: Queryable,
  instance: string,
  hostId: string | null = null,
): Promise<WarmContainerRow[]> {
  const { rows } = await db.query<WarmContainerRow>(
    `SELECT name, instance, image, size, state, container_id, computer_id, updated_at
       FROM warm_containers WHERE instance = $1 AND host_id IS NOT DISTINCT FROM $2 AND state <> 'claimed'
      ORDER BY created_at`,
    [instance, hostId],
  );
  return rows;
}

/** Which of `names` the pool has a row for, in any state. */
export async function knownPoolNames(db: Queryable, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await db.query<{ name: string }>(
    `SELECT name FROM warm_containers WHERE name = ANY($1::text[])`,
    [names],
  );
  return new Set(rows.map((row) => row.name));
}
