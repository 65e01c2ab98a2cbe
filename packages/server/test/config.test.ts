import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/compose/config.js';

describe('loadConfig', () => {
  test('defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      baseUrl: 'http://127.0.0.1:8080/v1',
      tokenUrl: 'http://127.0.0.1:8080/v1/auth/token',
      databaseUrl: undefined,
      dataDir: resolve('.svc/data'),
      sandbox: false,
      bootstrapKeyFile: resolve('.svc/bootstrap-key.json'),
      rateLimits: {
        principal: { quota: 600, windowSeconds: 60 },
        workspace_mutations: { quota: 120, windowSeconds: 60 },
      },
      quotas: {
        computersPerWorkspace: 20,
        workspacesPerPrincipal: 10,
        membersPerWorkspace: 100,
        activeKeysPerServiceAccount: 5,
        labelsPerComputer: 32,
      },
      bodyLimitBytes: 1048576,
      requestTimeoutMs: 300_000,
      simStepMs: 500,
      driver: 'simulated',
      docker: {
        socketPath: '/var/run/docker.sock',
        sweepMs: 30_000,
        instance: 'default',
        pull: 'never',
        execAgent: true,
        pool: {
          targets: [{ image: 'busybox', size: 'small', count: 1 }],
          defaulted: true,
          maxContainers: 16,
          maxMemoryMib: 16_384,
          refillMs: 2000,
        },
      },
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test.each([
    [
      'SVC_BASE_URL with a trailing slash',
      { SVC_BASE_URL: 'https://api.example.com/v1/' },
      { baseUrl: 'https://api.example.com/v1' },
    ],
    [
      'HOST and PORT shape the default base',
      { HOST: '0.0.0.0', PORT: '9000' },
      { baseUrl: 'http://0.0.0.0:9000/v1', port: 9000 },
    ],
    ['IPv6 host', { HOST: '::1' }, { baseUrl: 'http://[::1]:8080/v1' }],
    ['sandbox keeps data in memory', { SVC_SANDBOX: '1' }, { sandbox: true, dataDir: undefined }],
    ['rate limits off', { SVC_RATE_LIMITS: 'off' }, { rateLimits: undefined }],
    ['the read cache, on by default', {}, { readCache: true }],
    ['the read cache off', { SVC_READ_CACHE: 'off' }, { readCache: false }],
    [
      'a quota',
      { SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '3' },
      { quotas: expect.objectContaining({ computersPerWorkspace: 3 }) },
    ],
    [
      'the Docker driver',
      { SVC_DRIVER: 'docker', SVC_DOCKER_SOCKET: '/run/d.sock', SVC_DOCKER_SWEEP_MS: '1000' },
      { driver: 'docker', docker: expect.objectContaining({ socketPath: '/run/d.sock', sweepMs: 1000 }) },
    ],
    [
      'a warm pool',
      { SVC_POOL: 'busybox:small=2, debian-12:medium=1,ubuntu-2404:small=0', SVC_POOL_MAX_CONTAINERS: '3' },
      {
        docker: expect.objectContaining({
          pool: {
            targets: [
              { image: 'busybox', size: 'small', count: 2 },
              { image: 'debian-12', size: 'medium', count: 1 },
            ],
            defaulted: false,
            maxContainers: 3,
            maxMemoryMib: 16_384,
            refillMs: 2000,
          },
        }),
      },
    ],
    [
      'no warm pool: SVC_POOL empty',
      { SVC_POOL: '' },
      {
        docker: expect.objectContaining({ pool: expect.objectContaining({ targets: [], defaulted: false }) }),
      },
    ],
    [
      'no warm pool: SVC_POOL=off',
      { SVC_POOL: 'off' },
      {
        docker: expect.objectContaining({ pool: expect.objectContaining({ targets: [], defaulted: false }) }),
      },
    ],
    [
      "the files settings, by default the spec's bounds",
      {},
      { files: { maxBytes: 1024 ** 3, quotaBytes: 10 * 1024 ** 3, maxEntries: 10_000, heapTuning: true } },
    ],
    [
      'the files settings',
      {
        SVC_FILES_MAX_BYTES: '1048576',
        SVC_FILES_QUOTA_BYTES: '5',
        SVC_FILES_MAX_ENTRIES: '7',
        SVC_FILES_HEAP_TUNING: 'off',
      },
      { files: { maxBytes: 1048576, quotaBytes: 5, maxEntries: 7, heapTuning: false } },
    ],
    [
      'DATABASE_URL',
      { DATABASE_URL: 'postgresql://u@db:5432/svc' },
      { databaseUrl: 'postgresql://u@db:5432/svc' },
    ],
  ])('%s', (_name, env, want) => {
    expect(loadConfig(env)).toMatchObject(want);
  });

  test.each([
    ['PORT not a number', { PORT: 'eighty' }, /PORT must be a whole number/],
    [
      "files over the spec's x-svc-max-bytes",
      { SVC_FILES_MAX_BYTES: String(1024 ** 3 + 1) },
      /SVC_FILES_MAX_BYTES must be between/,
    ],
    [
      "archive entries over the spec's 10,000",
      { SVC_FILES_MAX_ENTRIES: '10001' },
      /SVC_FILES_MAX_ENTRIES must be between/,
    ],
    ['PORT too large', { PORT: '70000' }, /PORT must be between/],
    [
      'a request timeout under 10 s',
      { SVC_REQUEST_TIMEOUT_MS: '5000' },
      /SVC_REQUEST_TIMEOUT_MS must be between/,
    ],
    ['base URL without /v1', { SVC_BASE_URL: 'https://api.example.com' }, /must end in \/v1/],
    ['base URL with a query', { SVC_BASE_URL: 'https://api.example.com/v1?x=1' }, /query/],
    ['not a URL', { SVC_BASE_URL: 'api' }, /not a URL/],
    ['DATABASE_URL of another kind', { DATABASE_URL: 'mysql://x' }, /postgres/],
    ['bad rate limits', { SVC_RATE_LIMITS: 'lots' }, /SVC_RATE_LIMITS/],
    ['negative step', { SVC_SIM_STEP_MS: '-1' }, /SVC_SIM_STEP_MS/],
    ['an unknown driver', { SVC_DRIVER: 'qemu' }, /SVC_DRIVER must be one of simulated, docker/],
    ['a Docker instance Docker cannot name', { SVC_DOCKER_INSTANCE: 'A B' }, /SVC_DOCKER_INSTANCE/],
    ['an unknown pull policy', { SVC_DOCKER_PULL: 'always' }, /SVC_DOCKER_PULL/],
    [
      'an exec agent neither on nor off',
      { SVC_DOCKER_EXEC_AGENT: '0' },
      /SVC_DOCKER_EXEC_AGENT must be one of on, off/,
    ],
    [
      'a pool entry without a count',
      { SVC_POOL: 'busybox:small' },
      /SVC_POOL must be a comma-separated list/,
    ],
    [
      'a pool entry twice',
      { SVC_POOL: 'busybox:small=1,busybox:small=2' },
      /SVC_POOL names busybox:small twice/,
    ],
    [
      'a pool larger than its bound',
      { SVC_POOL: 'busybox:small=3,busybox:tiny=2', SVC_POOL_MAX_CONTAINERS: '4' },
      /asks for 5 ready containers, more than SVC_POOL_MAX_CONTAINERS=4/,
    ],
    ['a read cache neither on nor off', { SVC_READ_CACHE: 'yes' }, /SVC_READ_CACHE must be one of on, off/],
  ])('refuses %s', (_name, env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: webhooks', () => {
  test('defaults: Standard Webhooks schedule, 8 at once, loopback refused', () => {
    expect(loadConfig({}, { sandbox: true }).webhooks).toEqual({
      concurrency: 8,
      retryScheduleSeconds: [5, 300, 1800, 7200, 18_000, 36_000, 36_000],
      allowLoopback: false,
      pollMs: 1000,
      leaseMs: 30_000,
    });
    expect(loadConfig({}, { sandbox: true }).quotas.webhookEndpointsPerWorkspace).toBe(16);
  });

  test('settings', () => {
    const config = loadConfig(
      {
        SVC_WEBHOOK_RETRY_SCHEDULE: '1, 2,3',
        SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true',
        SVC_WEBHOOK_CONCURRENCY: '2',
        SVC_QUOTA_WEBHOOK_ENDPOINTS_PER_WORKSPACE: '4',
      },
      { sandbox: true },
    );
    expect(config.webhooks).toMatchObject({
      retryScheduleSeconds: [1, 2, 3],
      allowLoopback: true,
      concurrency: 2,
    });
    expect(config.quotas.webhookEndpointsPerWorkspace).toBe(4);
  });

  test.each(['5,x', '-1', '1.5', ',', Array(21).fill('1').join(',')])(
    'SVC_WEBHOOK_RETRY_SCHEDULE=%s is refused',
    (value) => {
      expect(() => loadConfig({ SVC_WEBHOOK_RETRY_SCHEDULE: value }, { sandbox: true })).toThrow(ConfigError);
    },
  );
});
