import type { ComputerRow } from '../../computers/repositories/computers.js';
import type { Queryable } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import type { Resource, Resources } from '../../platform/resources.js';
import type { HostState, PlacementHost } from '../placement.js';
import { shortOf } from '../placement.js';

// The statements of the fleet (design §4.4, migration 019): hosts, their heartbeats, what each holds,
// and where each computer lives.

/** A host as the fleet reads it: its row, its last heartbeat, and what its live computers hold. */
export interface HostRow {
  id: string;
  name: string;
  engine: string;
  tls_ca_pem: string | null;
  tls_cert_pem: string | null;
  tls_key_sealed: string | null;
  labels: Record<string, string>;
  capacity_vcpus: number;
  capacity_memory_mib: number;
  capacity_computers: number;
  cordoned: boolean;
  created_at: Date;
  updated_at: Date;
  seen_at: Date | null;
  engine_id: string | null;
}

/** A host and what it holds now, with its state as placement sees it. */
export interface HostStatus extends HostRow {
  state: HostState;
  used: Resources;
}

/** What an operator gives to register a host (`svc-server hosts add`). */
export interface NewHost {
  /** Given when something is bound to it before the insert (a sealed key's associated data). */
  id?: string;
  name: string;
  engine: string;
  labels?: Record<string, string>;
  capacity: Resources;
  tls?: { caPem: string; certPem: string; keySealed: string };
}

const HOST_COLUMNS = `h.id, h.name, h.engine, h.tls_ca_pem, h.tls_cert_pem, h.tls_key_sealed, h.labels,
  h.capacity_vcpus, h.capacity_memory_mib, h.capacity_computers, h.cordoned, h.created_at, h.updated_at,
  b.seen_at, b.engine_id`;

/**
 * Registers a host; a host of the same name is an error (`23505` from the unique index). It takes
 * nothing until its first heartbeat.
 *
 * @example
 * await insertHost(db, { name: 'dock-a', engine: 'unix:///var/run/docker.sock', capacity: { vcpus: 64, memory_mib: 262144, computers: 500 } });
 */
export async function insertHost(db: Queryable, host: NewHost): Promise<HostRow> {
  return (await insertHostRow(db, host, false)) as HostRow;
}

/** The host's row inserted; with `ifAbsent`, nothing (undefined) when one of its name exists. */
async function insertHostRow(db: Queryable, host: NewHost, ifAbsent: boolean): Promise<HostRow | undefined> {
  const { rows } = await db.query<HostRow>(
    `INSERT INTO hosts (id, name, engine, labels, capacity_vcpus, capacity_memory_mib, capacity_computers,
                        tls_ca_pem, tls_cert_pem, tls_key_sealed)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10)
     ${ifAbsent ? 'ON CONFLICT (name) DO NOTHING' : ''}
     RETURNING *, NULL::timestamptz AS seen_at, NULL::text AS engine_id`,
    [
      host.id ?? newId(),
      host.name,
      host.engine,
      host.labels ?? {},
      host.capacity.vcpus,
      host.capacity.memory_mib,
      host.capacity.computers,
      host.tls?.caPem ?? null,
      host.tls?.certPem ?? null,
      host.tls?.keySealed ?? null,
    ],
  );
  return rows[0];
}

/**
 * Registers a host under `name` unless one of that name exists (every replica of a one-Engine
 * deployment does this at start-up for `SVC_DOCKER_SOCKET`), and gives it the computers, pooled
 * containers and snapshots that have no host (those made before the fleet existed). Returns the host.
 *
 * @example
 * const local = await ensureHost(db, { name: 'local', engine: 'unix:///var/run/docker.sock', capacity });
 */
export async function ensureHost(db: Queryable, host: NewHost): Promise<HostRow> {
  await insertHostRow(db, host, true);
  const found = await hostByName(db, host.name);
  if (!found) throw new Error(`host ${host.name} vanished while it was registered`);
  await db.query('UPDATE computers SET host_id = $1 WHERE host_id IS NULL AND deleted_at IS NULL', [
    found.id,
  ]);
  await db.query('UPDATE warm_containers SET host_id = $1 WHERE host_id IS NULL', [found.id]);
  await db.query('UPDATE snapshots SET host_id = $1 WHERE host_id IS NULL', [found.id]);
  return found;
}

/**
 * One host by name, with its last heartbeat.
 *
 * @example
 * const host = await hostByName(db, 'dock-a'); // undefined: no such host
 */
export async function hostByName(db: Queryable, name: string): Promise<HostRow | undefined> {
  const { rows } = await db.query<HostRow>(
    `SELECT ${HOST_COLUMNS} FROM hosts h LEFT JOIN host_heartbeats b ON b.host_id = h.id WHERE h.name = $1`,
    [name],
  );
  return rows[0];
}

/**
 * Every host with its state (as of `unhealthyAfterMs` without a heartbeat) and what its live
 * computers hold, in id order. One statement: the counts come from `computers_host`.
 *
 * @example
 * const hosts = await hostStatuses(db, 30_000);
 */
export async function hostStatuses(db: Queryable, unhealthyAfterMs: number): Promise<HostStatus[]> {
  const { rows } = await db.query<
    HostRow & { healthy: boolean; used_vcpus: number; used_memory_mib: number; used_computers: number }
  >(
    `SELECT ${HOST_COLUMNS},
            COALESCE(b.seen_at > now() - make_interval(secs => $1::double precision / 1000), false) AS healthy,
            COALESCE(u.vcpus, 0)::integer AS used_vcpus, COALESCE(u.memory_mib, 0)::integer AS used_memory_mib,
            COALESCE(u.computers, 0)::integer AS used_computers
       FROM hosts h
       LEFT JOIN host_heartbeats b ON b.host_id = h.id
       LEFT JOIN LATERAL (${USED_BY_HOST('h.id')}) u ON true
      ORDER BY h.id`,
    [unhealthyAfterMs],
  );
  return rows.map(({ healthy, used_vcpus, used_memory_mib, used_computers, ...row }) => ({
    ...row,
    state: row.cordoned ? 'cordoned' : healthy ? 'healthy' : 'unhealthy',
    used: { vcpus: used_vcpus, memory_mib: used_memory_mib, computers: used_computers },
  }));
}

/** What the live computers on host `hostId` (an SQL expression) hold: their sizes, and one each. */
const USED_BY_HOST = (hostId: string) =>
  `SELECT sum(s.vcpus) AS vcpus, sum(s.memory_mib) AS memory_mib, count(*) AS computers
     FROM computers c JOIN sizes s ON s.name = c.size
    WHERE c.host_id = ${hostId} AND c.deleted_at IS NULL`;

/**
 * What a host's row says it can hold, by resource.
 *
 * @example
 * const { vcpus } = hostCapacity(await hostByName(db, 'dock-a'));
 */
export function hostCapacity(host: HostRow): Resources {
  return {
    vcpus: host.capacity_vcpus,
    memory_mib: host.capacity_memory_mib,
    computers: host.capacity_computers,
  };
}

/**
 * A host as placement sees it.
 *
 * @example
 * placeComputer((await hostStatuses(db, 30_000)).map(placementHost), request, { policy: 'pack' });
 */
export function placementHost(host: HostStatus): PlacementHost {
  return {
    id: host.id,
    labels: host.labels,
    capacity: hostCapacity(host),
    used: host.used,
    state: host.state,
  };
}

/**
 * Locks host `hostId`'s row (until the caller's transaction ends; the wait is bounded by its
 * `lock_timeout`) and answers what its live computers hold now, or undefined when the host cannot
 * take a computer: cordoned, gone, or without a heartbeat in `unhealthyAfterMs`. Two transactions
 * placing on the same host run this one after the other, and the second counts the first's
 * computer once it committed: the host is never overfilled.
 *
 * @example
 * const held = await lockHostForPlacement(tx, host.id, 30_000);
 */
async function lockHostForPlacement(
  tx: Queryable,
  hostId: string,
  unhealthyAfterMs: number,
): Promise<{ capacity: Resources; used: Resources } | undefined> {
  const locked = await tx.query<{ vcpus: number; memory_mib: number; computers: number }>(
    `SELECT h.capacity_vcpus AS vcpus, h.capacity_memory_mib AS memory_mib, h.capacity_computers AS computers
       FROM hosts h
      WHERE h.id = $1 AND NOT h.cordoned
        AND EXISTS (SELECT 1 FROM host_heartbeats b WHERE b.host_id = h.id
                     AND b.seen_at > now() - make_interval(secs => $2::double precision / 1000))
        FOR UPDATE OF h`,
    [hostId, unhealthyAfterMs],
  );
  const capacity = locked.rows[0];
  if (!capacity) return undefined;
  const { rows } = await tx.query<{ vcpus: number; memory_mib: number; computers: number }>(
    `SELECT COALESCE(u.vcpus, 0)::integer AS vcpus, COALESCE(u.memory_mib, 0)::integer AS memory_mib,
            COALESCE(u.computers, 0)::integer AS computers
       FROM (${USED_BY_HOST('$1')}) u`,
    [hostId],
  );
  return { capacity, used: rows[0] ?? { vcpus: 0, memory_mib: 0, computers: 0 } };
}

/**
 * Records where a computer lives, in the caller's transaction.
 *
 * @example
 * await setComputerHost(tx, computer.id, host.id);
 */
export async function setComputerHost(tx: Queryable, computerId: string, hostId: string): Promise<void> {
  await tx.query('UPDATE computers SET host_id = $2 WHERE id = $1', [computerId, hostId]);
}

/**
 * How many live computers of a workspace each zone (the hosts' `zone` label) holds, for the soft
 * anti-affinity of placement.
 *
 * @example
 * const placed = await workspaceZones(tx, workspace.id); // { a: 2, b: 1 }
 */
export async function workspaceZones(tx: Queryable, workspaceId: string): Promise<Record<string, number>> {
  const { rows } = await tx.query<{ zone: string; computers: number }>(
    `SELECT h.labels->>'zone' AS zone, count(*)::integer AS computers
       FROM computers c JOIN hosts h ON h.id = c.host_id
      WHERE c.workspace_id = $1 AND c.deleted_at IS NULL AND h.labels ? 'zone'
      GROUP BY 1`,
    [workspaceId],
  );
  return Object.fromEntries(rows.map((row) => [row.zone, row.computers]));
}

/**
 * Records that the host answered, as the Engine `engineId`. The first heartbeat records the Engine's
 * id; a later one from another Engine at the same address is refused (`false`) and changes nothing.
 *
 * @example
 * const accepted = await recordHeartbeat(db, host.id, info.ID);
 */
export async function recordHeartbeat(db: Queryable, hostId: string, engineId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO host_heartbeats (host_id, seen_at, engine_id) VALUES ($1, now(), $2)
     ON CONFLICT (host_id) DO UPDATE SET seen_at = now() WHERE host_heartbeats.engine_id = EXCLUDED.engine_id`,
    [hostId, engineId],
  );
  return rowCount === 1;
}

/**
 * Moves the resting computers (`running`, `stopped`, no operation in progress) of every host without
 * a heartbeat in `unhealthyAfterMs` to `unknown`; returns how many moved. Their events are written by
 * the computers' triggers, as for any change.
 *
 * @example
 * const moved = await markUnreachableComputers(db, 30_000);
 */
export async function markUnreachableComputers(db: Queryable, unhealthyAfterMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE computers c SET state = 'unknown', updated_at = now()
      WHERE c.deleted_at IS NULL AND c.state IN ('running', 'stopped') AND c.current_operation_id IS NULL
        AND c.host_id IN (
          SELECT h.id FROM hosts h LEFT JOIN host_heartbeats b ON b.host_id = h.id
           WHERE b.seen_at IS NULL OR b.seen_at <= now() - make_interval(secs => $1::double precision / 1000))`,
    [unhealthyAfterMs],
  );
  return rowCount ?? 0;
}

/**
 * Cordons (`true`) or uncordons a host by name; whether there is such a host.
 *
 * @example
 * await setCordoned(db, 'dock-a', true);
 */
export async function setCordoned(db: Queryable, name: string, cordoned: boolean): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE hosts SET cordoned = $2, updated_at = now() WHERE name = $1', [
    name,
    cordoned,
  ]);
  return rowCount === 1;
}

/**
 * What still lives on a host: live computers, pooled containers, snapshots.
 *
 * @example
 * const { computers } = await hostContents(db, host.id);
 */
export async function hostContents(
  db: Queryable,
  hostId: string,
): Promise<{ computers: number; pooled: number; snapshots: number }> {
  const { rows } = await db.query<{ computers: number; pooled: number; snapshots: number }>(
    `SELECT (SELECT count(*) FROM computers WHERE host_id = $1 AND deleted_at IS NULL)::integer AS computers,
            (SELECT count(*) FROM warm_containers WHERE host_id = $1)::integer AS pooled,
            (SELECT count(*) FROM snapshots WHERE host_id = $1)::integer AS snapshots`,
    [hostId],
  );
  return rows[0] ?? { computers: 0, pooled: 0, snapshots: 0 };
}

/**
 * Removes an empty host's row (deleted computers that lived there forget it). The caller checks
 * {@link hostContents} first, in the same transaction.
 *
 * @example
 * await deleteHost(tx, host.id);
 */
export async function deleteHost(tx: Queryable, hostId: string): Promise<void> {
  await tx.query('UPDATE computers SET host_id = NULL WHERE host_id = $1 AND deleted_at IS NOT NULL', [
    hostId,
  ]);
  await tx.query('DELETE FROM hosts WHERE id = $1', [hostId]);
}

/**
 * The vCPUs and memory of a catalogue size; undefined when the catalogue lacks it.
 *
 * @example
 * const size = await sizeResources(tx, 'small'); // { vcpus: 2, memory_mib: 4096 }
 */
export async function sizeResources(
  db: Queryable,
  name: string,
): Promise<{ vcpus: number; memory_mib: number } | undefined> {
  const { rows } = await db.query<{ vcpus: number; memory_mib: number }>(
    'SELECT vcpus, memory_mib FROM sizes WHERE name = $1',
    [name],
  );
  return rows[0];
}

/**
 * Tries one host for a computer of `request`, under a savepoint: with room, its row stays locked
 * until the caller's transaction ends and `{ room: true }` comes back; full (`short` names the first
 * resource it lacks), cordoned, gone or silent, the savepoint is rolled back, which lets go of the
 * row's lock at once. So a transaction holds at most the host it is placed on, and two that try hosts
 * in different orders cannot deadlock.
 *
 * @example
 * const tried = await tryHostForPlacement(tx, host.id, 30_000, { vcpus: 2, memory_mib: 4096, computers: 1 });
 */
export async function tryHostForPlacement(
  tx: Queryable,
  hostId: string,
  unhealthyAfterMs: number,
  request: Resources,
): Promise<{ room: true } | { room: false; short?: Resource }> {
  await tx.query('SAVEPOINT placement');
  const held = await lockHostForPlacement(tx, hostId, unhealthyAfterMs);
  const lacking = held ? shortOf({ id: hostId, labels: {}, state: 'healthy', ...held }, request) : [];
  if (!held || lacking.length > 0) {
    await tx.query('ROLLBACK TO SAVEPOINT placement');
    return lacking[0] ? { room: false, short: lacking[0] } : { room: false };
  }
  await tx.query('RELEASE SAVEPOINT placement');
  return { room: true };
}

/**
 * Locks a host's row until the caller's transaction ends (a removal checks what it holds under it).
 *
 * @example
 * await lockHost(tx, host.id);
 */
export async function lockHost(tx: Queryable, hostId: string): Promise<void> {
  await tx.query('SELECT id FROM hosts WHERE id = $1 FOR UPDATE', [hostId]);
}

/**
 * The live computers on a host, in id order (a drain goes through them).
 *
 * @example
 * const computers = await liveComputersOn(db, host.id);
 */
export async function liveComputersOn(db: Queryable, hostId: string): Promise<ComputerRow[]> {
  const { rows } = await db.query<ComputerRow>(
    'SELECT * FROM computers WHERE host_id = $1 AND deleted_at IS NULL ORDER BY id',
    [hostId],
  );
  return rows;
}

/**
 * One computer's row by id, whatever its state.
 *
 * @example
 * const row = await computerRow(db, computer.id);
 */
export async function computerRow(db: Queryable, computerId: string): Promise<ComputerRow | undefined> {
  const { rows } = await db.query<ComputerRow>('SELECT * FROM computers WHERE id = $1', [computerId]);
  return rows[0];
}

/**
 * A drain's move begins: a stopped computer at rest on `hostId` becomes `moving` (no action is allowed
 * meanwhile); false when it changed since it was read.
 *
 * @example
 * if (!(await startMove(db, computer.id, host.id))) return;
 */
export async function startMove(db: Queryable, computerId: string, hostId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE computers SET state = 'moving', updated_at = now()
      WHERE id = $1 AND state = 'stopped' AND current_operation_id IS NULL AND host_id = $2`,
    [computerId, hostId],
  );
  return rowCount === 1;
}

/**
 * A move ends on `hostId`, in the caller's transaction (which holds the host's row with room): the
 * computer lives there now, `stopped` again; false when it was not `moving`.
 *
 * @example
 * await finishMove(tx, computer.id, target.id);
 */
export async function finishMove(tx: Queryable, computerId: string, hostId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE computers SET host_id = $2, state = 'stopped', updated_at = now() WHERE id = $1 AND state = 'moving'`,
    [computerId, hostId],
  );
  return rowCount === 1;
}

/**
 * A move given up before it switched hosts: the computer is `stopped` on its host again.
 *
 * @example
 * await abandonMove(db, computer.id);
 */
export async function abandonMove(db: Queryable, computerId: string): Promise<void> {
  await db.query(
    `UPDATE computers SET state = 'stopped', updated_at = now() WHERE id = $1 AND state = 'moving'`,
    [computerId],
  );
}
