import Docker from 'dockerode';
import { expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/compose/config.js';
import { DockerDriver, openDockerDriver } from '../../../src/compose/docker.js';
import { DriverError } from '../../../src/computers/driver.js';

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

test('an Engine that stops answering fails the action with unavailable, the socket error in the log only', async () => {
  const logged: unknown[] = [];
  const driver = new DockerDriver({
    docker: new Docker({ socketPath: '/nonexistent/docker.sock' }),
    catalog: { size: async () => ({ vcpus: 1, memory_mib: 128 }), image: async () => ({ reference: 'x' }) },
    instance: 'test',
    log: (_message, fields) => logged.push(fields),
  });
  const computer = { id: 'c', workspace_id: 'w', name: 'box', size: 'small', image: 'busybox', labels: {} };
  const error = await driver
    .run('start', computer, { signal: new AbortController().signal, progress: async () => {} })
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(DriverError);
  expect(error).toMatchObject({
    code: 'unavailable',
    message: 'the Docker Engine could not be reached',
    details: { driver: 'docker', action: 'start' },
  });
  expect(JSON.stringify(logged)).toContain('/nonexistent/docker.sock');
  expect(JSON.stringify(error)).not.toContain('/nonexistent');
});

test.each([
  [
    'a size the catalogue lacks',
    'busybox:huge=1',
    [],
    /SVC_POOL names the size "huge", which the catalogue lacks/,
  ],
  [
    'more memory than SVC_POOL_MAX_MEMORY_MIB',
    'busybox:small=3',
    [{ vcpus: 2, memory_mib: 4096, reference: 'svc/busybox:1' }],
    /SVC_POOL's containers would hold 12288 MiB, more than SVC_POOL_MAX_MEMORY_MIB=8192/,
  ],
])(
  'a warm pool naming %s stops start-up with a ConfigError, before the Engine is asked',
  async (_name, pool, rows, message) => {
    const config = loadConfig(
      {
        SVC_DRIVER: 'docker',
        SVC_DOCKER_SOCKET: '/nonexistent/docker.sock',
        SVC_POOL: pool,
        SVC_POOL_MAX_MEMORY_MIB: '8192',
      },
      { sandbox: true },
    );
    const error = await openDockerDriver(config, {
      query: async () => ({ rows, rowCount: rows.length }),
    } as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  },
);
