import Docker from 'dockerode';
import { afterAll, describe, inject } from 'vitest';
import { labelFilter } from '../../src/computers/docker/labels.js';
import { newId } from '../../src/platform/ids.js';

const probe = inject('docker');
const ci = process.env.CI === 'true';

/** One test run's view of the Engine: its own `svc.instance` label, and cleanup of what it made. */
export interface DockerUnderTest {
  docker: Docker;
  socketPath: string;
  /** Unique to this describe: every container the tests make carries it, and only those are touched. */
  instance: string;
  /** This run's containers, by id. */
  containers(computerId?: string): Promise<Docker.ContainerInfo[]>;
}

/**
 * `describe` for tests against the real Docker Engine. Without an Engine (or without the test image,
 * or without `options.image` when the suite asks for one of `BUILT_IMAGES` (docker-probe.ts)) the suite is skipped with a line saying why, unless `CI=true`: then it runs and fails, because CI
 * must exercise the driver. After the suite every container and snapshot image carrying this
 * describe's instance label (or one made of it per engine, `<instance>-pglite`) is removed by id; no
 * other is ever touched.
 *
 * @example
 * describeDocker('docker driver', (engine) => {
 *   test('creates', async () => expect(await engine.containers()).toEqual([]));
 * });
 */
export function describeDocker(
  title: string,
  body: (engine: DockerUnderTest) => void,
  options: { image?: string } = {},
): void {
  const reason = !probe.usable
    ? probe.reason
    : options.image && !probe.images.includes(options.image)
      ? `the image ${options.image} is missing (run pnpm images:build)`
      : '';
  const skip = reason !== '' && !ci;
  if (skip) console.warn(`skipping "${title}": ${reason} (set CI=true to fail instead; pnpm images:build)`);
  (skip ? describe.skip : describe)(`${title} [docker]`, () => {
    if (reason) throw new Error(`${reason}; CI=true, so this fails instead of skipping`);
    const docker = new Docker({ socketPath: probe.socketPath });
    const instance = `test-${newId()}`;
    const containers = (computerId?: string) =>
      docker.listContainers({ all: true, filters: { label: labelFilter(instance, computerId) } });
    afterAll(async () => {
      // This describe's instance, and the ones its suites make of it per engine (`<instance>-pglite`).
      const ours = (labels: Record<string, string> | undefined) => {
        const value = labels?.['svc.instance'];
        return value === instance || value?.startsWith(`${instance}-`) === true;
      };
      const made = { filters: { label: ['svc.instance'] } };
      for (const container of await docker.listContainers({ all: true, ...made }))
        if (ours(container.Labels))
          await docker
            .getContainer(container.Id)
            .remove({ force: true, v: true })
            .catch(() => {});
      // Snapshot images (design §4.2), by id: one a test's computer still used when its snapshot was
      // deleted is left by the Engine until that computer's deletion sweeps it, which a test may skip.
      for (const image of await docker.listImages(made))
        if (ours(image.Labels))
          await docker
            .getImage(image.Id)
            .remove({ force: true })
            .catch(() => {});
    });
    body({ docker, socketPath: probe.socketPath, instance, containers });
  });
}
