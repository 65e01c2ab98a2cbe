import type { Queryable } from '../platform/db/database.js';
import { ApiError } from '../platform/errors.js';
import type { Resource, Resources } from '../platform/resources.js';
import { type PlacementPolicy, placeComputer } from './placement.js';
import {
  hostStatuses,
  placementHost,
  setComputerHost,
  sizeResources,
  tryHostForPlacement,
  workspaceZones,
} from './repositories/hosts.js';

/** How creates are placed on hosts (`SVC_FLEET_*`; design §4.4). */
export interface FleetPlacement {
  /** `pack` (the default: the fullest host that fits) or `spread` (the emptiest). */
  policy: PlacementPolicy;
  /** A host without a heartbeat for this long takes nothing (`SVC_HOST_UNHEALTHY_MS`). */
  unhealthyAfterMs: number;
  /**
   * Whether every computer must have a host (the Docker driver: `true`). Otherwise a create is placed
   * only when hosts are registered, and lives nowhere in particular when none are.
   */
  required: boolean;
}

/** The computer being placed: just inserted, in the caller's transaction. */
export interface Placeable {
  id: string;
  workspace_id: string;
  size: string;
  /** Only this host will do (a computer made from a snapshot lives where the snapshot's image is). */
  host_id?: string | null;
}

/** How many times placement reads the hosts again when every candidate it chose was full by then. */
const ROUNDS = 3;
/** Candidates tried per round, best first. */
const CANDIDATES = 4;

/**
 * Places a computer just inserted (in the caller's transaction) on a host with room for its size,
 * by the policy, and records the host on the computer; answers the host's id (undefined when hosts
 * are not required and none are registered). The room is checked again under the chosen host's row
 * lock, held until the caller commits, so two replicas placing at once never overfill a host: the
 * second waits for the first's commit and counts its computer. When no host has room it throws 503
 * `unavailable` with `details.reason: no_capacity` and the short resource; the caller's transaction
 * rolls back, and nothing is created.
 *
 * @example
 * await placeNewComputer(tx, computer, { policy: 'pack', unhealthyAfterMs: 30_000, required: true });
 */
export async function placeNewComputer(
  tx: Queryable,
  computer: Placeable,
  options: FleetPlacement,
): Promise<string | undefined> {
  let request: { vcpus: number; memory_mib: number; computers: number } | undefined;
  let short: Resource = 'computers';
  for (let round = 0; round < ROUNDS; round++) {
    let hosts = await hostStatuses(tx, options.unhealthyAfterMs);
    if (hosts.length === 0 && !options.required) return undefined;
    request ??= { ...(await sizeOf(tx, computer.size)), computers: 1 };
    if (computer.host_id) hosts = hosts.filter((host) => host.id === computer.host_id);
    const placed = placeComputer(
      hosts.map(placementHost),
      {
        ...request,
        antiAffinity: { label: 'zone', placed: await workspaceZones(tx, computer.workspace_id) },
      },
      { policy: options.policy, maxCandidates: CANDIDATES },
    );
    // Where the fleet is short stays internal: how many hosts there are, and their names.
    if (!placed.placed) throw noCapacity(placed.resource ?? 'computers', computer.size);
    for (const hostId of placed.candidates) {
      // Each try under a savepoint: a host found full (or gone) is let go at once, so a create holds at
      // most the host it is placed on, and two creates trying hosts in different orders cannot deadlock.
      const tried = await tryHostForPlacement(tx, hostId, options.unhealthyAfterMs, request);
      if (!tried.room) {
        if (tried.short) short = tried.short;
        continue;
      }
      await setComputerHost(tx, computer.id, hostId);
      return hostId;
    }
  }
  throw noCapacity(short, computer.size);
}

async function sizeOf(tx: Queryable, name: string): Promise<Pick<Resources, 'vcpus' | 'memory_mib'>> {
  const size = await sizeResources(tx, name);
  if (!size) throw new Error(`the size ${name} vanished from the catalogue during a create`);
  return size;
}

/** 503 `unavailable`, `details.reason: no_capacity`: no host has room (host names stay internal). */
function noCapacity(resource: Resource, size: string): ApiError {
  return new ApiError('unavailable', `no host has room for a computer of size ${size} now; retry later`, {
    details: { reason: 'no_capacity', resource },
    headers: { 'Retry-After': '30' },
  });
}
