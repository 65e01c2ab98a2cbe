import Docker from 'dockerode';

/** What the test files learn about the Docker Engine, probed once per run. */
export interface DockerProbe {
  socketPath: string;
  /** The Engine answers and the test image is there. */
  usable: boolean;
  reason: string;
  /** Of the other images `pnpm images:build` makes ({@link BUILT_IMAGES}), the ones the Engine has. */
  images: string[];
}

/** The image the driver's tests run: built by `pnpm images:build` (tools/images/build.sh). */
export const TEST_IMAGE = 'svc/busybox:1';
/** The other images of `pnpm images:build`, which tests may ask for (`describeDocker(…, { image })`). */
export const BUILT_IMAGES = ['svc/debian:13', 'svc/desktop:13'] as const;

/** Pings the Engine on `SVC_DOCKER_SOCKET` (default `/var/run/docker.sock`) and looks for the test image. */
export async function probeDocker(): Promise<DockerProbe> {
  const socketPath = process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock';
  const docker = new Docker({ socketPath, timeout: 3000 });
  try {
    await docker.ping();
  } catch (error) {
    return {
      socketPath,
      usable: false,
      reason: `no Docker Engine at ${socketPath} (${(error as Error).message})`,
      images: [],
    };
  }
  try {
    await docker.getImage(TEST_IMAGE).inspect();
  } catch {
    return {
      socketPath,
      usable: false,
      reason: `the image ${TEST_IMAGE} is missing (run pnpm images:build)`,
      images: [],
    };
  }
  const images: string[] = [];
  for (const image of BUILT_IMAGES)
    if (
      await docker
        .getImage(image)
        .inspect()
        .then(
          () => true,
          () => false,
        )
    )
      images.push(image);
  return { socketPath, usable: true, reason: '', images };
}
