import { Agent } from 'node:http';
import Docker from 'dockerode';
import { type DockerCatalog, databaseCatalog } from '../computers/docker/catalog.js';
import type { WarmPoolConfig } from '../computers/docker/config.js';
import { FleetDriver } from '../fleet/fleet-driver.js';
import { ensureHost } from '../fleet/repositories/hosts.js';
import { serverSecretKey } from '../identity/auth/secret-key.js';
import { ConfigError } from '../platform/config.js';
import type { Database } from '../platform/db/database.js';
import type { Config } from './config.js';

export type { DockerCatalog } from '../computers/docker/catalog.js';
export { databaseCatalog } from '../computers/docker/catalog.js';
export type { DockerDriverOptions } from '../computers/docker/docker-driver.js';
export { DockerDriver } from '../computers/docker/docker-driver.js';
export { runExec } from '../computers/docker/exec.js';
export { containerLabels, containerName, isOurs, LABEL, labelFilter } from '../computers/docker/labels.js';
export type { ReconcilerOptions } from '../computers/docker/reconciler.js';
export { DockerReconciler } from '../computers/docker/reconciler.js';
export {
  DockerSnapshots,
  SNAPSHOT_LABEL,
  snapshotLabels,
  snapshotReference,
} from '../computers/docker/snapshots.js';
export type { WarmPoolOptions } from '../computers/docker/warm-pool.js';
export { POOL_LABEL, WarmPool } from '../computers/docker/warm-pool.js';
export type { CatalogSize } from '../computers/repositories/catalog.js';

/**
 * A client of the Engine at `socketPath` whose connections are kept alive, so that a command's create
 * and inspect reuse one instead of opening a new one each (docker-modem passes `agent` to every request;
 * @types/dockerode does not list it). A hijacked exec start takes its connection out of the pool.
 *
 * @example
 * const docker = dockerClient('/var/run/docker.sock');
 */
export function dockerClient(socketPath: string): Docker {
  const options: Docker.DockerOptions & { agent: Agent } = {
    socketPath,
    agent: new Agent({ keepAlive: true }),
  };
  return new Docker(options);
}

/**
 * The Docker driver for `SVC_DRIVER=docker`: a {@link FleetDriver} over the hosts of the `hosts` table
 * (design §4.4). Unless `SVC_DOCKER_HOST_NAME` is empty, the Engine on `SVC_DOCKER_SOCKET` is first
 * checked (a `ConfigError` naming the socket when it does not answer, so start-up stops with a clear
 * message) and registered as the host of that name when none is, with `SVC_DOCKER_CAPACITY` (or what
 * the Engine reports: 16 vCPUs per CPU, 4× its memory, 1000 computers). Computers, pooled containers
 * and snapshots that have no host yet (made before the fleet) become that host's.
 *
 * @example
 * const driver = await openDockerDriver(config, db);
 * await driver.start();
 */
export async function openDockerDriver(
  config: Pick<Config, 'docker' | 'fleet'> &
    Partial<Pick<Config, 'files' | 'secretKey' | 'secretKeyFile' | 'databaseUrl' | 'dataDir'>>,
  db: Database,
  log?: (message: string, fields?: Record<string, unknown>) => void,
): Promise<FleetDriver> {
  const { socketPath, pool, hostName, capacity } = config.docker;
  const catalog = databaseCatalog(db);
  await checkPoolMemory(pool, catalog);
  if (hostName !== '') {
    let info: { NCPU: number; MemTotal: number };
    try {
      info = await dockerClient(socketPath).info();
    } catch (error) {
      throw new ConfigError(
        `SVC_DRIVER=docker, but the Docker Engine does not answer on SVC_DOCKER_SOCKET=${socketPath} (${(error as Error).message})`,
      );
    }
    await ensureHost(db, {
      name: hostName,
      engine: `unix://${socketPath}`,
      capacity: {
        vcpus: capacity.vcpus ?? info.NCPU * 16,
        memory_mib: capacity.memory_mib ?? Math.floor(info.MemTotal / 1024 / 1024) * 4,
        computers: capacity.computers ?? 1000,
      },
    });
  }
  // The server's secret key opens remote Engines' client keys (sealed by `svc-server hosts add`).
  const secretKey =
    config.secretKeyFile === undefined
      ? undefined
      : serverSecretKey({ ...config, secretKey: config.secretKey, secretKeyFile: config.secretKeyFile });
  return new FleetDriver({
    db,
    catalog,
    config,
    ...(secretKey ? { secretKey } : {}),
    ...(log ? { log } : {}),
  });
}

/**
 * Refuses a pool whose targets name an image or size the catalogue lacks (but the default's), or whose
 * sizes add up to more memory than `SVC_POOL_MAX_MEMORY_MIB`: start-up stops with a `ConfigError` saying which.
 */
async function checkPoolMemory(pool: WarmPoolConfig, catalog: DockerCatalog): Promise<void> {
  let memoryMib = 0;
  for (const target of pool.targets) {
    // The default pool names the catalogue's busybox: a catalogue without it makes no pool, and says so
    // once when the pool tries (the operator set no SVC_POOL to be refused).
    if (pool.defaulted && !((await catalog.size(target.size)) && (await catalog.image(target.image))))
      continue;
    const size = await catalog.size(target.size);
    if (!size) throw new ConfigError(`SVC_POOL names the size "${target.size}", which the catalogue lacks`);
    if (!(await catalog.image(target.image)))
      throw new ConfigError(`SVC_POOL names the image "${target.image}", which the catalogue lacks`);
    memoryMib += size.memory_mib * target.count;
  }
  if (memoryMib > pool.maxMemoryMib)
    throw new ConfigError(
      `SVC_POOL's containers would hold ${memoryMib} MiB, more than SVC_POOL_MAX_MEMORY_MIB=${pool.maxMemoryMib}`,
    );
}
