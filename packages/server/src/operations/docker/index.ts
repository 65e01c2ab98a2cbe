import { Agent } from 'node:http';
import Docker from 'dockerode';
import type { Config, WarmPoolConfig } from '../../config.js';
import { ConfigError } from '../../config.js';
import type { Database } from '../../db/database.js';
import { type DockerCatalog, databaseCatalog } from './catalog.js';
import { DockerDriver } from './docker-driver.js';
import { DockerReconciler } from './reconciler.js';

export type { CatalogSize } from '../../repositories/catalog.js';
export type { DockerCatalog } from './catalog.js';
export { databaseCatalog } from './catalog.js';
export type { DockerDriverOptions } from './docker-driver.js';
export { DockerDriver } from './docker-driver.js';
export { runExec } from './exec.js';
export { containerLabels, containerName, isOurs, LABEL, labelFilter } from './labels.js';
export type { ReconcilerOptions } from './reconciler.js';
export { DockerReconciler } from './reconciler.js';
export { DockerSnapshots, SNAPSHOT_LABEL, snapshotLabels, snapshotReference } from './snapshots.js';
export type { WarmPoolOptions } from './warm-pool.js';
export { POOL_LABEL, WarmPool } from './warm-pool.js';

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
 * The Docker driver and its reconciler for `SVC_DRIVER=docker`: checks the Engine answers on
 * `SVC_DOCKER_SOCKET` (a `ConfigError` naming the socket otherwise, so start-up stops with a clear
 * message) and reads the host's CPU count once, to cap sizes to it.
 *
 * @example
 * const { driver, reconciler } = await openDockerDriver(config, db);
 * reconciler.start();
 */
export async function openDockerDriver(
  config: Pick<Config, 'docker'> & Partial<Pick<Config, 'files'>>,
  db: Database,
  log?: (message: string, fields?: Record<string, unknown>) => void,
): Promise<{ driver: DockerDriver; reconciler: DockerReconciler }> {
  const { socketPath, instance, pull, sweepMs, pool, execAgent } = config.docker;
  // Kept-alive connections to the Engine: a command's create and inspect reuse one, not a new one each.
  // docker-modem passes `agent` to every request; @types/dockerode does not list it.
  const options: Docker.DockerOptions & { agent: Agent } = {
    socketPath,
    agent: new Agent({ keepAlive: true }),
  };
  const docker = new Docker(options);
  const catalog = databaseCatalog(db);
  await checkPoolMemory(pool, catalog);
  let cpus: number;
  try {
    cpus = (await docker.info()).NCPU;
  } catch (error) {
    throw new ConfigError(
      `SVC_DRIVER=docker, but the Docker Engine does not answer on SVC_DOCKER_SOCKET=${socketPath} (${(error as Error).message})`,
    );
  }
  const driver = new DockerDriver({
    docker,
    catalog,
    pool: { db, targets: pool.targets, maxContainers: pool.maxContainers, refillMs: pool.refillMs },
    instance,
    pull,
    hostCpus: cpus,
    ...(execAgent === false ? { execAgent } : {}),
    ...(config.files
      ? { filesQuotaBytes: config.files.quotaBytes, filesMaxArchiveEntries: config.files.maxEntries }
      : {}),
    ...(log ? { log } : {}),
  });
  const reconciler = new DockerReconciler({
    docker,
    db,
    instance,
    sweepMs,
    owns: (info, computerId) => driver.pool?.owns(info, computerId) ?? Promise.resolve(false),
    ...(log ? { log } : {}),
  });
  return { driver, reconciler };
}

/**
 * Refuses a pool whose targets name an image or size the catalogue lacks, or whose sizes add up to
 * more memory than `SVC_POOL_MAX_MEMORY_MIB`: start-up stops with a `ConfigError` saying which.
 */
async function checkPoolMemory(pool: WarmPoolConfig, catalog: DockerCatalog): Promise<void> {
  let memoryMib = 0;
  for (const target of pool.targets) {
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
