import { databaseCatalog } from '../computers/docker/catalog.js';
import type { DockerSection } from '../computers/docker/config.js';
import { DockerDriver, moveImageId } from '../computers/docker/docker-driver.js';
import { snapshotReference } from '../computers/docker/snapshots.js';
import type { DriverComputer } from '../computers/driver.js';
import { requestComputerAction } from '../computers/records.js';
import type { ComputerRow } from '../computers/repositories/computers.js';
import { forgetPoolClaim } from '../computers/repositories/warm-pool.js';
import type { Database } from '../platform/db/database.js';
import type { SecretBox } from '../platform/secrets.js';
import type { FleetSection } from './config.js';
import { engineClient } from './fleet-driver.js';
import { placeComputer } from './placement.js';
import {
  abandonMove,
  computerRow,
  finishMove,
  type HostRow,
  type HostStatus,
  hostStatuses,
  liveComputersOn,
  placementHost,
  setCordoned,
  sizeResources,
  startMove,
  tryHostForPlacement,
} from './repositories/hosts.js';

/** What a drain did. `left`: live computers still on the host when it ended. */
export interface DrainReport {
  moved: { id: string; name: string; to: string }[];
  refused: { id: string; name: string; reason: string }[];
  left: number;
}

export interface DrainOptions {
  /** Stop running computers first (an ordinary stop, `trigger: drain`), then move them. */
  stopRunning?: boolean;
  /** Start each moved computer on its new host (an ordinary start). */
  startAfter?: boolean;
  /** How long a stop asked for by the drain may take before the computer is refused (default 120 s). */
  stopTimeoutMs?: number;
  /** A line per step, for the operator. */
  progress?: (line: string) => void;
  /** Opens the client keys of remote Engines (see `engineClient`). */
  box?: SecretBox;
}

/**
 * Drains a host (design §4.4): cordons it, then moves each of its stopped computers to another host
 * with room, through an image of its files, and reports what it moved and what it refused. A move:
 * the computer goes `moving` (no action is allowed meanwhile); on the old host its container and its
 * `/home` are committed into an image (as a snapshot is); the image is streamed from the old Engine
 * into the new one (`GET /images/{name}/get` into `POST /images/load`, through this process, never a
 * temporary file); a container is made from it on the new host; then, in one transaction under the
 * new host's row lock (its room checked again), the computer's `host_id` changes and it is `stopped`
 * again; last, the old container and image are removed. A drain cut short leaves computers `moving`:
 * running it again resumes them, and every step is "make it so" by name. Running computers are
 * refused (listed with the reason) unless `stopRunning`; computers in other states too (`failed`:
 * recover or delete it first; `unknown`: the host does not answer; an operation in progress).
 *
 * @example
 * const report = await drainHost(db, host, config, { progress: console.log });
 */
export async function drainHost(
  db: Database,
  host: HostRow,
  config: DockerSection & FleetSection,
  options: DrainOptions = {},
): Promise<DrainReport> {
  const say = options.progress ?? (() => {});
  await setCordoned(db, host.name, true);
  say(`cordoned ${host.name}`);
  const report: DrainReport = { moved: [], refused: [], left: 0 };
  const catalog = databaseCatalog(db);
  const drivers = new Map<string, DockerDriver>();
  const driverOf = (row: HostRow) => {
    let driver = drivers.get(row.id);
    if (!driver) {
      driver = new DockerDriver({
        docker: engineClient(row, options.box),
        catalog,
        instance: config.docker.instance,
        execAgent: false,
      });
      drivers.set(row.id, driver);
    }
    return driver;
  };
  try {
    for (const computer of await liveComputersOn(db, host.id)) {
      let current = computer;
      if (current.state === 'running' && options.stopRunning) {
        say(`stopping ${current.name} (running)`);
        const stopped = await stopForDrain(db, current, options.stopTimeoutMs ?? 120_000);
        if (!stopped) {
          report.refused.push({
            id: current.id,
            name: current.name,
            reason: 'its stop did not finish in time',
          });
          continue;
        }
        current = stopped;
      }
      const reason = refusal(current);
      if (reason) {
        report.refused.push({ id: current.id, name: current.name, reason });
        continue;
      }
      try {
        const to = await moveComputer(db, current, host, config, driverOf, say);
        report.moved.push({ id: current.id, name: current.name, to: to.name });
        if (options.startAfter) {
          await db.transaction((tx) => requestComputerAction(tx, current.id, 'start', current.created_by));
          say(`starting ${current.name} on ${to.name}`);
        }
      } catch (error) {
        report.refused.push({ id: current.id, name: current.name, reason: (error as Error).message });
      }
    }
    report.left = (await liveComputersOn(db, host.id)).length;
    return report;
  } finally {
    for (const driver of drivers.values()) driver.close();
  }
}

/** Why a computer cannot move now, or undefined when it can (stopped, or a move to resume). */
function refusal(computer: ComputerRow): string | undefined {
  if (computer.state === 'stopped' || computer.state === 'moving')
    return computer.current_operation_id ? 'an operation is in progress on it' : undefined;
  if (computer.state === 'running') return 'it is running: stop it, or drain with --stop-running';
  if (computer.state === 'failed') return 'it is failed: recover or delete it first';
  if (computer.state === 'unknown') return 'its host does not answer';
  return `it is ${computer.state}: an operation is in progress on it`;
}

/** Asks for an ordinary stop (`trigger: drain`) and waits for the replicas' workers to finish it. */
async function stopForDrain(
  db: Database,
  computer: ComputerRow,
  timeoutMs: number,
): Promise<ComputerRow | undefined> {
  try {
    await db.transaction((tx) =>
      requestComputerAction(tx, computer.id, 'stop', computer.created_by, { trigger: 'drain' }),
    );
  } catch {
    return undefined;
  }
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const row = await computerRow(db, computer.id);
    if (!row || row.state === 'deleted' || row.state === 'failed') return undefined;
    if (row.state === 'stopped' && !row.current_operation_id) return row;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

/** Moves one stopped (or `moving`) computer off `from`; answers the host it went to. */
async function moveComputer(
  db: Database,
  computer: ComputerRow,
  from: HostRow,
  config: DockerSection & FleetSection,
  driverOf: (row: HostRow) => DockerDriver,
  say: (line: string) => void,
): Promise<{ id: string; name: string }> {
  // `moving` first, so no action starts meanwhile; a computer changed since it was read is left.
  if (computer.state !== 'moving' && !(await startMove(db, computer.id, from.id)))
    throw new Error('it changed while the drain read it; run the drain again');
  const size = await sizeResources(db, computer.size);
  const request = { vcpus: size?.vcpus ?? 0, memory_mib: size?.memory_mib ?? 0, computers: 1 };
  const others = (await hostStatuses(db, config.fleet.unhealthyAfterMs)).filter(
    (host) => host.id !== from.id,
  );
  const placed = placeComputer(others.map(placementHost), request, { policy: config.fleet.policy });
  if (!placed.placed) {
    await abandonMove(db, computer.id);
    throw new Error(`no other host has room (${placed.message})`);
  }
  const target = others.find((host) => host.id === placed.host.id) as HostStatus;
  // The image of its files, named after the computer: a drain run again finds it and goes on.
  const image = { id: moveImageId(computer.id), workspace_id: computer.workspace_id };
  const source = driverOf(from);
  const destination = driverOf(target);
  const asDriver: DriverComputer = { ...computer, host_id: from.id };
  const context = { signal: AbortSignal.timeout(30 * 60_000), progress: async () => {} };
  const reference = snapshotReference(image);
  if (!(await imageExists(destination, reference))) {
    say(`moving ${computer.name}: committing its files on ${from.name}`);
    await source.snapshots.take(asDriver, image, context);
    say(`moving ${computer.name}: copying its image to ${target.name}`);
    await copyImage(source, destination, reference, context.signal);
  }
  say(`moving ${computer.name}: making its container on ${target.name}`);
  await destination.run('create', { ...asDriver, host_id: target.id, snapshot_id: image.id }, context);
  // Untagged now that a container holds it: the Engine keeps it while the container lives, and the
  // computer's delete removes what is left (DockerDriver, `moveImageId`).
  await destination.engine
    .getImage(reference)
    .remove({ force: true, noprune: true })
    .catch(() => {});
  const switched = await db.transaction(async (tx) => {
    const tried = await tryHostForPlacement(tx, target.id, config.fleet.unhealthyAfterMs, request);
    return tried.room && (await finishMove(tx, computer.id, target.id));
  });
  if (!switched) {
    // The target filled up meanwhile: its new container goes; the drain run again picks another host.
    await destination.run('delete', { ...asDriver, host_id: target.id }, context).catch(() => {});
    throw new Error(`${target.name} filled up during the move; run the drain again`);
  }
  say(`moving ${computer.name}: removing it from ${from.name}`);
  await source.run('delete', asDriver, context).catch(() => {});
  await forgetPoolClaim(db, computer.id);
  await source.snapshots.remove(image).catch(() => {});
  return { id: target.id, name: target.name };
}

async function imageExists(driver: DockerDriver, reference: string): Promise<boolean> {
  return driver.engine
    .getImage(reference)
    .inspect()
    .then(
      () => true,
      () => false,
    );
}

/** Streams an image from one Engine into another: `GET /images/{name}/get` into `POST /images/load`. */
async function copyImage(
  from: DockerDriver,
  to: DockerDriver,
  reference: string,
  signal: AbortSignal,
): Promise<void> {
  const tar = (await from.engine.getImage(reference).get()) as NodeJS.ReadableStream;
  signal.addEventListener('abort', () => (tar as { destroy?: () => void }).destroy?.(), { once: true });
  const answer = (await to.engine.loadImage(tar, { quiet: true })) as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of answer) text += chunk.toString();
  if (/"error"/.test(text)) throw new Error(`the new host refused the image: ${text.slice(0, 200)}`);
}
