// The Docker driver's section of the configuration (`SVC_DOCKER_*`, `SVC_POOL*`): the Engine, the
// containers' label, the warm pool, and the host every replica registers for it (design §4.3, §4.4).
import { ConfigError, type Env, int, oneOf } from '../../platform/config.js';
import { RESOURCES, type Resource, type Resources } from '../../platform/resources.js';

/** The Docker driver's environment (`SVC_DOCKER_*`). */
export interface DockerConfig {
  /** The Engine API's Unix socket (`SVC_DOCKER_SOCKET`, default `/var/run/docker.sock`). */
  socketPath: string;
  /** How often the driver compares every container with its computer (`SVC_DOCKER_SWEEP_MS`). */
  sweepMs: number;
  /**
   * The `svc.instance` label on every container of this deployment (`SVC_DOCKER_INSTANCE`): the driver
   * lists and touches only containers that carry it, so deployments (and test runs) can share an Engine.
   */
  instance: string;
  /** `never` (the default: images are built or pulled by the operator) or `missing` (`SVC_DOCKER_PULL`). */
  pull: 'never' | 'missing';
  /**
   * Whether commands go through an exec agent in each running container (`SVC_DOCKER_EXEC_AGENT`, `on`
   * by default; `off`: the Engine's exec for every command). See `agent.ts` beside this.
   */
  execAgent: boolean;
  /** The warm pool of ready containers that creates claim (`SVC_POOL*`; design §4.3). Empty: no pool. */
  pool: WarmPoolConfig;
  /**
   * The name under which every replica registers the Engine of `socketPath` as a host of the fleet at
   * start-up, unless a host of that name exists (`SVC_DOCKER_HOST_NAME`, default `local`; empty: none,
   * the fleet is only what `svc-server hosts add` registered). Design §4.4.
   */
  hostName: string;
  /**
   * That host's capacity when it is registered (`SVC_DOCKER_CAPACITY`, e.g.
   * `vcpus=16,memory_mib=65536,computers=200`); a resource left out is read from the Engine: 16 vCPUs
   * per CPU, 4× its memory, 1000 computers (what a host allows, not what it has; design §4.4).
   */
  capacity: Partial<Resources>;
}

/** One kind of pooled container: how many ready containers of `image` at `size` to keep. */
export interface WarmPoolTarget {
  image: string;
  size: string;
  count: number;
}

/** The warm pool's settings (`SVC_POOL`, `SVC_POOL_MAX_CONTAINERS`, `SVC_POOL_MAX_MEMORY_MIB`, `SVC_POOL_REFILL_MS`). */
export interface WarmPoolConfig {
  /**
   * `SVC_POOL`, e.g. `busybox:small=2,debian-12:medium=1`: image and size names of the catalogue.
   * Unset: {@link DEFAULT_POOL}; empty or `off`: no pool.
   */
  targets: readonly WarmPoolTarget[];
  /** Whether the targets are the default (`SVC_POOL` unset): a catalogue without them is no error then. */
  defaulted: boolean;
  /** The most ready containers the pool holds in all (`SVC_POOL_MAX_CONTAINERS`, default 16). */
  maxContainers: number;
  /** The most memory their sizes add up to (`SVC_POOL_MAX_MEMORY_MIB`, default 16384). */
  maxMemoryMib: number;
  /** How often each replica tops the pool up, besides after every claim (`SVC_POOL_REFILL_MS`, default 2000). */
  refillMs: number;
}

/** The Docker driver's section of the configuration. */
export interface DockerSection {
  /** The Docker driver's settings; read only when `driver` is `docker`. */
  docker: DockerConfig;
}

/**
 * The Docker driver's settings from `env` (read, and checked, whichever driver runs).
 *
 * @example
 * dockerSection({ SVC_DOCKER_SOCKET: '/run/d.sock' }).docker.socketPath; // '/run/d.sock'
 */
export function dockerSection(env: Env): DockerSection {
  return {
    docker: Object.freeze({
      socketPath: env.SVC_DOCKER_SOCKET || '/var/run/docker.sock',
      sweepMs: int(env, 'SVC_DOCKER_SWEEP_MS', 30_000, 100, 3_600_000),
      instance: dockerInstance(env.SVC_DOCKER_INSTANCE),
      pull: oneOf(env, 'SVC_DOCKER_PULL', ['never', 'missing'] as const),
      execAgent: oneOf(env, 'SVC_DOCKER_EXEC_AGENT', ['on', 'off'] as const) === 'on',
      pool: Object.freeze(warmPool(env)),
      hostName: hostName(env.SVC_DOCKER_HOST_NAME),
      capacity: Object.freeze(capacity(env.SVC_DOCKER_CAPACITY)),
    }),
  };
}

/**
 * The warm pool the Docker driver ships with (`SVC_POOL` unset): one ready busybox container, so the
 * first create and its first command skip the Engine's create and start; with demand the pool grows
 * within `SVC_POOL_MAX_*` (design §4.3). At rest it holds one idle container (an init and the exec
 * agent's shell: about 1 MiB of memory, no CPU), counted at its size's 4 GiB limit against
 * `SVC_POOL_MAX_MEMORY_MIB`.
 */
export const DEFAULT_POOL = 'busybox:small=1';

/** `SVC_POOL*`: the pool's targets and bounds; the targets' total count within `SVC_POOL_MAX_CONTAINERS`. */
function warmPool(env: Env): WarmPoolConfig {
  const maxContainers = int(env, 'SVC_POOL_MAX_CONTAINERS', 16, 0, 1000);
  const targets: WarmPoolTarget[] = [];
  const defaulted = env.SVC_POOL === undefined;
  const spec = defaulted ? DEFAULT_POOL : env.SVC_POOL?.trim() === 'off' ? '' : (env.SVC_POOL ?? '');
  for (const part of spec.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const match = /^([a-z0-9][a-z0-9._-]{0,62}):([a-z0-9][a-z0-9._-]{0,62})=(\d{1,4})$/.exec(entry);
    if (!match)
      throw new ConfigError(
        `SVC_POOL must be a comma-separated list of <image>:<size>=<count> (e.g. busybox:small=2), got ${JSON.stringify(entry)}`,
      );
    const [, image = '', size = '', count = '0'] = match;
    if (targets.some((t) => t.image === image && t.size === size))
      throw new ConfigError(`SVC_POOL names ${image}:${size} twice`);
    if (Number(count) > 0) targets.push(Object.freeze({ image, size, count: Number(count) }));
  }
  const total = targets.reduce((sum, t) => sum + t.count, 0);
  if (total > maxContainers)
    throw new ConfigError(
      `SVC_POOL asks for ${total} ready containers, more than SVC_POOL_MAX_CONTAINERS=${maxContainers}`,
    );
  return {
    targets: Object.freeze(targets),
    defaulted,
    maxContainers,
    maxMemoryMib: int(env, 'SVC_POOL_MAX_MEMORY_MIB', 16_384, 0, 1024 * 1024),
    refillMs: int(env, 'SVC_POOL_REFILL_MS', 2000, 10, 600_000),
  };
}

/** `SVC_DOCKER_HOST_NAME`: `local` unless set; set and empty, no host is registered at start-up. */
function hostName(raw: string | undefined): string {
  if (raw === undefined) return 'local';
  if (raw !== '' && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(raw))
    throw new ConfigError(
      `SVC_DOCKER_HOST_NAME must be a DNS label (lowercase letters, digits and '-'), or empty, got ${JSON.stringify(raw)}`,
    );
  return raw;
}

/** One `resource=<n>` of a capacity. */
const CAPACITY_ENTRY = new RegExp(`^(${RESOURCES.join('|')})=(\\d{1,9})$`);

/**
 * A host capacity written `vcpus=16,memory_mib=65536,computers=200` (any of the three).
 *
 * @example
 * capacity('vcpus=8,computers=50'); // { vcpus: 8, computers: 50 }
 */
export function capacity(raw: string | undefined, name = 'SVC_DOCKER_CAPACITY'): Partial<Resources> {
  const result: Partial<Resources> = {};
  for (const part of (raw ?? '').split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const match = CAPACITY_ENTRY.exec(entry);
    if (!match)
      throw new ConfigError(
        `${name} must be a comma-separated list of ${RESOURCES.map((r) => `${r}=<n>`).join(', ')}, got ${JSON.stringify(entry)}`,
      );
    const key = match[1] as Resource;
    if (result[key] !== undefined) throw new ConfigError(`${name} names ${key} twice`);
    result[key] = Number(match[2]);
  }
  return result;
}

function dockerInstance(raw: string | undefined): string {
  const value = raw || 'default';
  // It becomes a label value and part of container names, which Docker limits to [a-zA-Z0-9_.-].
  if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(value))
    throw new ConfigError(
      `SVC_DOCKER_INSTANCE must be 1–63 lowercase letters, digits, '.', '_' or '-', got ${JSON.stringify(value)}`,
    );
  return value;
}
