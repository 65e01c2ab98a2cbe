import { Agent } from 'node:http';
import Docker from 'dockerode';
import type { Config } from '../../config.js';
import { ConfigError } from '../../config.js';
import type { Queryable } from '../../db/database.js';
import { databaseCatalog } from './catalog.js';
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
  db: Queryable,
  log?: (message: string, fields?: Record<string, unknown>) => void,
): Promise<{ driver: DockerDriver; reconciler: DockerReconciler }> {
  const { socketPath, instance, pull, sweepMs, execAgent } = config.docker;
  // Kept-alive connections to the Engine: a command's create and inspect reuse one, not a new one each.
  // docker-modem passes `agent` to every request; @types/dockerode does not list it.
  const options: Docker.DockerOptions & { agent: Agent } = {
    socketPath,
    agent: new Agent({ keepAlive: true }),
  };
  const docker = new Docker(options);
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
    catalog: databaseCatalog(db),
    instance,
    pull,
    hostCpus: cpus,
    ...(execAgent === false ? { execAgent } : {}),
    ...(config.files
      ? { filesQuotaBytes: config.files.quotaBytes, filesMaxArchiveEntries: config.files.maxEntries }
      : {}),
    ...(log ? { log } : {}),
  });
  const reconciler = new DockerReconciler({ docker, db, instance, sweepMs, ...(log ? { log } : {}) });
  return { driver, reconciler };
}
