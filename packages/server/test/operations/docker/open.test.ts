import { expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { openDockerDriver } from '../../../src/operations/docker/index.js';

// Needs no Engine: the point is what happens without one.
test('SVC_DRIVER=docker with nothing on the socket stops start-up with a ConfigError naming the socket', async () => {
  const config = loadConfig(
    { SVC_DRIVER: 'docker', SVC_DOCKER_SOCKET: '/nonexistent/docker.sock' },
    { sandbox: true },
  );
  const error = await openDockerDriver(config, {
    query: async () => ({ rows: [], rowCount: 0 }),
  } as never).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(
    /^SVC_DRIVER=docker, but the Docker Engine does not answer on SVC_DOCKER_SOCKET=\/nonexistent\/docker\.sock/,
  );
});
