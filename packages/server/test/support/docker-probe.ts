import Docker from 'dockerode';

/** What the test files learn about the Docker Engine, probed once per run. */
export interface DockerProbe {
  socketPath: string;
  /** The Engine answers and the test image is there. */
  usable: boolean;
  reason: string;
}

/** The image the driver's tests run: built by `pnpm images:build` (tools/images/build.sh). */
export const TEST_IMAGE = 'svc/busybox:1';

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
    };
  }
  try {
    await docker.getImage(TEST_IMAGE).inspect();
  } catch {
    return {
      socketPath,
      usable: false,
      reason: `the image ${TEST_IMAGE} is missing (run pnpm images:build)`,
    };
  }
  return { socketPath, usable: true, reason: '' };
}
