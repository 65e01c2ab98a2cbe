import type Docker from 'dockerode';
import type { ContainerCreateOptions, ContainerInspectInfo, HostConfig } from 'dockerode';
import type { Database, Queryable } from '../../platform/db/database.js';
import type {
  ComputerDriver,
  DriverAction,
  DriverComputer,
  DriverContext,
  DriverOutcome,
  ExecRequest,
  ExecResult,
} from '../driver.js';
import { DriverError } from '../driver.js';
import type { FilesContainer } from '../files/docker-files.js';
import { DockerFiles } from '../files/docker-files.js';
import { DockerProcesses } from '../processes/docker.js';
import { imageReference } from '../repositories/catalog.js';
import { DEFAULT_SCREEN, screenEnv } from '../screen-limits.js';
import { DockerTerminals } from '../terminals/docker.js';
import { AgentUnavailable, ExecAgents } from './agent.js';
import type { DockerCatalog } from './catalog.js';
import type { WarmPoolConfig, WarmPoolTarget } from './config.js';
import { runExec } from './exec.js';
import { containerLabels, containerName, isOurs } from './labels.js';
import { DockerSnapshots, snapshotReference } from './snapshots.js';
import { WarmPool } from './warm-pool.js';

export interface DockerDriverOptions {
  docker: Docker;
  catalog: DockerCatalog;
  /** The `svc.instance` label value of this deployment (`SVC_DOCKER_INSTANCE`). */
  instance: string;
  /** `missing`: pull an image the Engine lacks; `never` (default): fail the operation instead. */
  pull?: 'never' | 'missing';
  /** CPUs of the Engine's host: a size's vCPUs are capped to it (the Engine refuses more). */
  hostCpus?: number;
  /** Seconds a container gets between SIGTERM and SIGKILL on stop and restart (default 10). */
  stopSeconds?: number;
  /** Processes a container may hold (default 512). */
  pidsLimit?: number;
  /** Where Engine errors are told in full; operations carry only a short message (default: nowhere). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Bytes of files under /home per computer (default 10 GiB). */
  filesQuotaBytes?: number;
  /** Most entries of one uploaded archive (default 10 000). */
  filesMaxArchiveEntries?: number;
  /**
   * The warm pool (design §4.3) and the database that keeps it. Without it no container is pooled,
   * and containers a pool made earlier are not recognised as computers'.
   */
  pool?: Omit<WarmPoolConfig, 'maxMemoryMib' | 'defaulted'> & {
    /** What the targets may grow to with demand (`SVC_POOL_MAX_MEMORY_MIB`); without it they do not grow. */
    maxMemoryMib?: number;
    db: Database;
    /** The host the Engine is (design §4.4): the pool's rows are that host's. */
    hostId?: string;
    /** False while the host is cordoned: the pool then holds no ready containers. */
    active?: () => boolean;
  };
  /** `false`: every command through the Engine's exec, never an exec agent (default: agents on). */
  execAgent?: boolean;
}

/**
 * The id under which a drain writes the image that moves a computer between hosts (design §4.4): a
 * snapshot of its workspace that no snapshot row names, `svc-snapshot/<workspace>:move-<computer id>`.
 *
 * @example
 * snapshotReference({ id: moveImageId(computer.id), workspace_id: computer.workspace_id });
 */
export function moveImageId(computerId: string): string {
  return `move-${computerId}`;
}

/** The computer's writable place: an anonymous volume, seeded from the image, removed with the container. */
const HOME = '/home';

/** `User` when the image would run as root: `nobody`, which every image we build has. */
const FALLBACK_USER = '65534:65534';
const ROOT_USERS = new Set(['', '0', 'root', '0:0', 'root:root']);
/** How long a command waits for its computer's exec agent that is starting, before it takes the Engine exec. */
const AGENT_WAIT_MS = 1000;
/** Bound on the remembered container ids of `exec` (a few dozen bytes each); past it they are forgotten. */
const MAX_EXEC_TARGETS = 10_000;
/** How long an answer of the Engine about an image is reused by {@link DockerDriver.imageAvailable}. */
const IMAGE_CHECK_MS = 10_000;
/** How long {@link DockerDriver.imageAvailable} waits for the Engine before saying "unavailable". */
const IMAGE_CHECK_TIMEOUT_MS = 3_000;

/**
 * Runs computers as Docker containers through the Engine API socket (never the network): one container
 * per computer, named `svc-<instance>-<computer id>` and labelled `svc.managed`, `svc.instance`,
 * `svc.computer_id` and `svc.workspace_id`; it never lists or touches a container without those labels.
 * Every action is "make it so": create when the container exists, stop when stopped, delete when gone
 * all succeed, so the worker may run them again after a takeover. Containers have no network, no
 * capabilities, no new privileges, a read-only root with a tmpfs `/tmp` and a volume of its own at
 * `/home` (where the files API writes), a non-root user, and the CPU, memory and process limits of
 * their size (SECURITY.md, "Driver").
 *
 * @example
 * const driver = new DockerDriver({ docker: new Docker({ socketPath }), catalog: databaseCatalog(db), instance: 'default' });
 * await driver.run('create', computer, { signal, progress: async () => {} });
 */
export class DockerDriver implements ComputerDriver {
  readonly name = 'docker';
  readonly instance: string;
  private readonly docker: Docker;
  private readonly catalog: DockerCatalog;
  private readonly pull: 'never' | 'missing';
  private readonly hostCpus: number;
  private readonly stopSeconds: number;
  private readonly pidsLimit: number;
  private readonly log: NonNullable<DockerDriverOptions['log']>;
  /** Computer id → the Engine id of its container, once an inspect found it ours and running. */
  private readonly execTargets = new Map<string, string>();
  /** Files on the computers, through the Engine's archive endpoints (see {@link DockerFiles}). */
  readonly files: DockerFiles;
  /** Ready containers that creates claim (see {@link WarmPool}); undefined without `options.pool`. */
  readonly pool: WarmPool | undefined;
  /** Image reference → when the Engine was asked whether it has it, and its answer. */
  private readonly imageChecks = new Map<string, { at: number; available: Promise<boolean> }>();
  /** Snapshots of computers' files as images of their workspace (see {@link DockerSnapshots}). */
  readonly snapshots: DockerSnapshots;
  /** Programs on a PTY in running containers (terminals/docker.ts). */
  readonly terminals: DockerTerminals;
  /** Helper programs attached in running containers (processes/docker.ts). */
  readonly processes: DockerProcesses;
  /** The exec agents in running containers (see {@link ExecAgents}); `undefined` when turned off. */
  private readonly agents: ExecAgents | undefined;
  /** Computers whose create just claimed a pooled container (computer id → Engine id), until their start. */
  private readonly freshClaims = new Map<string, string>();

  constructor(options: DockerDriverOptions) {
    this.docker = options.docker;
    this.catalog = options.catalog;
    this.instance = options.instance;
    this.pull = options.pull ?? 'never';
    this.hostCpus = options.hostCpus ?? Number.POSITIVE_INFINITY;
    this.stopSeconds = options.stopSeconds ?? 10;
    this.pidsLimit = options.pidsLimit ?? 512;
    this.log = options.log ?? (() => {});
    this.agents = options.execAgent === false ? undefined : new ExecAgents(this.docker, this.log);
    this.files = new DockerFiles({
      docker: this.docker,
      container: (computer, signal) => this.filesContainer(computer, signal),
      ...(options.filesQuotaBytes === undefined ? {} : { quotaBytes: options.filesQuotaBytes }),
      ...(options.filesMaxArchiveEntries === undefined
        ? {}
        : { maxArchiveEntries: options.filesMaxArchiveEntries }),
      quickRunner: (containerId) => {
        // The container's idle agent (the first ask starts one, for the next commands).
        const agent = this.agents?.take(containerId);
        return (
          agent &&
          (async (request) => {
            try {
              return await agent.run(request);
            } catch (error) {
              if (error instanceof AgentUnavailable) return undefined;
              throw error;
            }
          })
        );
      },
      log: this.log,
    });
    const pool = options.pool;
    this.pool =
      pool &&
      new WarmPool({
        docker: this.docker,
        db: pool.db,
        instance: this.instance,
        ...(pool.hostId === undefined ? {} : { hostId: pool.hostId }),
        ...(pool.active === undefined ? {} : { active: pool.active }),
        targets: pool.targets,
        maxContainers: pool.maxContainers,
        ...(pool.maxMemoryMib === undefined
          ? {}
          : {
              maxMemoryMib: pool.maxMemoryMib,
              memoryMib: async (size: string) => (await this.catalog.size(size))?.memory_mib,
            }),
        refillMs: pool.refillMs,
        make: (name, target, labels, signal) => this.makePoolContainer(name, target, labels, signal),
        log: this.log,
      });
    this.terminals = new DockerTerminals(this.docker, (computer, signal) => this.inspect(computer, signal));
    this.processes = new DockerProcesses(this.docker, (computer, signal) => this.inspect(computer, signal));
    this.snapshots = new DockerSnapshots({
      docker: this.docker,
      instance: this.instance,
      inspect: (computer, signal) => this.inspect(computer, signal),
    });
  }

  /** The Engine this driver talks to (a drain streams images between two of them). */
  get engine(): Docker {
    return this.docker;
  }

  /** The computer's container for its files (checked ours by its labels); undefined when there is none. */
  async filesContainer(computer: DriverComputer, signal: AbortSignal): Promise<FilesContainer | undefined> {
    const info = await this.inspect(computer, signal);
    if (!info) return undefined;
    return {
      container: this.docker.getContainer(info.Id),
      running: info.State.Running,
      user: info.Config.User ?? '',
    };
  }

  async run(
    action: DriverAction,
    computer: DriverComputer,
    context: DriverContext,
  ): Promise<DriverOutcome | undefined> {
    const { signal } = context;
    let outcome: DriverOutcome | undefined;
    try {
      switch (action) {
        case 'create':
          await this.ensureContainer(computer, signal);
          break;
        case 'start': {
          // A container this driver just claimed from the warm pool runs already, made with this
          // size's limits and its exec agent: nothing to ask the Engine (the create's rename was the
          // last call). The reconciler follows it from here as any other.
          const claimed = this.freshClaims.get(computer.id);
          this.freshClaims.delete(computer.id);
          if (claimed) {
            this.rememberExecTarget(computer.id, claimed);
            this.agents?.take(claimed);
            break;
          }
          // One inspect decides: a container that runs with its size's limits (one a create took from
          // the warm pool on another replica) is started already; otherwise make, size and start it.
          let info = await this.inspect(computer, signal);
          if (info?.State.Running && (await this.sized(computer, info))) {
            // Its first command skips an inspect, and finds an exec agent started already.
            this.rememberExecTarget(computer.id, info.Id);
            this.agents?.take(info.Id);
            break;
          }
          if (!info) {
            await this.ensureContainer(computer, signal);
            info = await this.inspect(computer, signal);
          }
          if (info && !(await this.sized(computer, info)))
            await this.container(computer).update({
              ...(await this.limits(computer.size)),
              abortSignal: signal,
            });
          await this.container(computer).start({ abortSignal: signal }).catch(unless(304));
          const running = await this.expectRunning(computer, signal);
          this.rememberExecTarget(computer.id, running.Id);
          this.agents?.take(running.Id);
          break;
        }
        case 'restart':
          await this.ensureContainer(computer, signal);
          await this.update(computer, signal);
          await this.container(computer).restart({ t: this.stopSeconds, abortSignal: signal });
          await this.expectRunning(computer, signal);
          break;
        case 'stop':
          if (!(await this.inspect(computer, signal)))
            throw new DriverError(
              'not_found',
              "the computer's container is gone; start it to make a new one",
              {
                driver: this.name,
              },
            );
          await this.container(computer)
            .stop({ t: this.stopSeconds, abortSignal: signal })
            .catch(unless(304));
          break;
        case 'delete':
          await this.remove(computer, signal);
          // What is left of a deleted snapshot it was created from goes with its last computer.
          if (computer.snapshot_id) await this.snapshots.sweep(computer.snapshot_id);
          // And the image a drain moved it here with (design §4.4), untagged once its container was made.
          await this.snapshots.sweep(moveImageId(computer.id));
          break;
        case 'recover':
          outcome = await this.recover(computer, signal);
          break;
      }
    } catch (error) {
      throw this.failure(action, error, signal);
    }
    await context.progress(100);
    return outcome;
  }

  /**
   * What the Engine has of a failed computer, made into a resting state: its container runs
   * (`running`), exists and does not run (`stopped`), or is gone (a new one from the computer's image,
   * left `stopped`). The container is found by name and must carry this computer's labels (`inspect`
   * refuses a stranger's): no other container is ever touched.
   */
  private async recover(computer: DriverComputer, signal: AbortSignal): Promise<DriverOutcome> {
    const info = await this.inspect(computer, signal);
    if (info?.State.Running) return { state: 'running' };
    if (!info) await this.ensureContainer(computer, signal);
    return { state: 'stopped' };
  }

  /**
   * Brings a container's CPU, memory and process limits to its size (the Engine's container update),
   * when they differ. Run before every start and restart.
   */
  async update(computer: DriverComputer, signal?: AbortSignal): Promise<void> {
    const info = await this.inspect(computer, signal);
    if (!info || (await this.sized(computer, info))) return;
    await this.container(computer).update({ ...(await this.limits(computer.size)), abortSignal: signal });
  }

  /** Whether the container has the CPU, memory and process limits of the computer's size. */
  private async sized(computer: DriverComputer, info: ContainerInspectInfo): Promise<boolean> {
    const want = await this.limits(computer.size);
    const have = info.HostConfig;
    return (
      have.Memory === want.Memory &&
      have.MemorySwap === want.MemorySwap &&
      have.NanoCpus === want.NanoCpus &&
      have.PidsLimit === want.PidsLimit
    );
  }

  /**
   * Runs a command in the computer's running container. The container is addressed by the Engine id
   * that a first inspect found ours (labels) and running, so later commands skip that round trip; an
   * id that no longer answers (404: removed, even if a stranger took the name since; 409: not running)
   * is forgotten and the command goes through the inspect again. Once the id is known, the command goes
   * to the container's exec agent when one is idle (started in the background by the first command,
   * see {@link ExecAgents}), through the Engine's exec otherwise: with stdin, while the agent is busy
   * or starting, or where none could start.
   */
  async exec(computer: DriverComputer, request: ExecRequest): Promise<ExecResult> {
    try {
      return await this.execOnce(computer, request);
    } catch (error) {
      if (error instanceof DriverError || request.signal.aborted) throw error;
      // The container stopped or went between the look and the command (an Engine restart stops
      // every container): as when the look finds it so.
      if (isStatus(error, 404, 409))
        throw new DriverError('invalid_state', 'the computer is not running', { driver: this.name });
      if (!engineFault(error)) throw error;
      // The Engine failed under the command (restarted, gone, answered 5xx): the caller may retry
      // once it is back. The command may have run in part; nothing of it is reported as a result.
      this.log('docker driver: the Engine failed an exec', {
        computer_id: computer.id,
        error: String(error),
      });
      throw new DriverError('unavailable', 'the Docker Engine failed while the command ran; retry shortly', {
        driver: this.name,
        reason: 'engine_failed',
      });
    }
  }

  private async execOnce(computer: DriverComputer, request: ExecRequest): Promise<ExecResult> {
    const known = this.execTargets.get(computer.id);
    if (known) {
      const agent = request.stdin === undefined ? await this.agents?.ready(known, AGENT_WAIT_MS) : undefined;
      if (agent) {
        try {
          return await agent.run(request);
        } catch (error) {
          if (!(error instanceof AgentUnavailable)) throw error;
        }
      }
      try {
        return await runExec(this.docker, this.docker.getContainer(known), request);
      } catch (error) {
        this.execTargets.delete(computer.id);
        this.agents?.forget(known);
        if (!isStatus(error, 404, 409)) throw error;
      }
    }
    const info = await this.inspect(computer, request.signal);
    if (!info?.State.Running)
      throw new DriverError('invalid_state', 'the computer is not running', { driver: this.name });
    this.rememberExecTarget(computer.id, info.Id);
    if (request.stdin === undefined) this.agents?.take(info.Id); // starts one for the next commands
    return runExec(this.docker, this.docker.getContainer(info.Id), request);
  }

  /** Closes the exec agents' connections (each agent then exits in its container). */
  close(): void {
    this.agents?.close();
  }

  /** Remembers the Engine id of a computer's running container, which an inspect found ours. */
  private rememberExecTarget(computerId: string, containerId: string): void {
    if (this.execTargets.size >= MAX_EXEC_TARGETS) this.execTargets.clear();
    this.execTargets.set(computerId, containerId);
  }

  /**
   * Whether the Engine has the container image of the catalogue image `image` now (an answer at most
   * {@link IMAGE_CHECK_MS} old; an Engine that does not answer within {@link IMAGE_CHECK_TIMEOUT_MS}:
   * no). With `pull: 'missing'` an image the Engine lacks may still be pulled when a computer is made.
   *
   * @example
   * await driver.imageAvailable('debian-13'); // true once `pnpm images:build` made svc/debian:13
   */
  async imageAvailable(image: string, db?: Queryable): Promise<boolean> {
    const entry = await (db ? imageReference(db, image) : this.catalog.image(image));
    if (!entry?.reference) return false;
    const now = Date.now();
    const known = this.imageChecks.get(entry.reference);
    if (known && now - known.at < IMAGE_CHECK_MS) return known.available;
    let timer: NodeJS.Timeout | undefined;
    const available = Promise.race([
      this.docker
        .getImage(entry.reference)
        .inspect()
        .then(
          () => true,
          () => false,
        ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), IMAGE_CHECK_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    // Only catalogue references are ever keys, so the map stays as small as the catalogue.
    this.imageChecks.set(entry.reference, { at: now, available });
    return available;
  }

  /**
   * Whether the Engine answered that it lacks the container image of `image` (or the catalogue has no
   * reference for it); an Engine that does not answer within {@link IMAGE_CHECK_TIMEOUT_MS}: no.
   *
   * @example
   * await driver.imageMissing('ubuntu-2404'); // true where `pnpm images:build` cannot build it
   */
  async imageMissing(image: string, db?: Queryable): Promise<boolean> {
    const entry = await (db ? imageReference(db, image) : this.catalog.image(image));
    if (!entry) return false;
    if (!entry.reference) return true;
    const reference = entry.reference;
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      this.docker
        .getImage(reference)
        .inspect()
        .then(
          () => false,
          (error: unknown) => isStatus(error, 404),
        ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), IMAGE_CHECK_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** The container of `computer`, as the Engine reports it; `undefined` when there is none. */
  async inspect(computer: DriverComputer, signal?: AbortSignal): Promise<ContainerInspectInfo | undefined> {
    const info = await absentOn404(this.container(computer).inspect({ abortSignal: signal }));
    if (
      info &&
      !isOurs(info.Config.Labels, this.instance, computer.id) &&
      !(await this.pool?.owns(info, computer.id))
    )
      throw new DriverError('internal', 'a container of that name exists that this service does not manage', {
        driver: this.name,
      });
    return info;
  }

  private container(computer: DriverComputer): Docker.Container {
    return this.docker.getContainer(containerName(this.instance, computer.id));
  }

  private async ensureContainer(computer: DriverComputer, signal: AbortSignal): Promise<void> {
    if (await this.inspect(computer, signal)) return;
    // A ready container from the warm pool, renamed to this computer's: it runs already. Never for a
    // computer made from a snapshot: its files are in the snapshot's image, not in a pooled one.
    // Nor for a screen of its own size: a pooled desktop has the default one.
    if (!computer.snapshot_id && !ownScreen(computer) && (await this.pool?.claim(computer))) {
      const claimed = this.pool?.claimedBy(computer.id);
      if (claimed) {
        if (this.freshClaims.size >= MAX_EXEC_TARGETS) this.freshClaims.clear();
        this.freshClaims.set(computer.id, claimed);
      }
      return;
    }
    const options = await this.createOptions(
      {
        image: computer.image,
        size: computer.size,
        ...(computer.snapshot_id
          ? { snapshot: { id: computer.snapshot_id, workspace_id: computer.workspace_id } }
          : {}),
        ...(computer.screen_width && computer.screen_height
          ? { screen: { width: computer.screen_width, height: computer.screen_height } }
          : {}),
      },
      containerName(this.instance, computer.id),
      computer.name,
      containerLabels(this.instance, computer),
      signal,
    );
    // A replica racing us to the same name gets 409; its container is this computer's container.
    await this.docker.createContainer(options).catch(unless(409));
    if (!(await this.inspect(computer, signal)))
      throw new DriverError('internal', 'the container vanished as it was created', { driver: this.name });
  }

  /**
   * Makes and starts a container for the warm pool, with exactly the options of a computer's container
   * of that image and size (its hostname is `computer`: Docker cannot change it at the claim), and its
   * exec agent.
   */
  private async makePoolContainer(
    name: string,
    target: WarmPoolTarget,
    labels: Record<string, string>,
    signal: AbortSignal,
  ): Promise<string> {
    const options = await this.createOptions(target, name, 'computer', labels, signal);
    const container = await this.docker.createContainer(options);
    await container.start({ abortSignal: signal });
    // Its exec agent is started now, not at the claim: the claiming computer's first command then
    // costs a line on the agent's stream, not an Engine exec (which a busy Engine makes slow). Ready
    // once the agent is, or a second later without it (the claim's start begins one then).
    this.agents?.take(container.id);
    await this.agents?.ready(container.id, AGENT_WAIT_MS);
    return container.id;
  }

  /** The Engine's create options of a computer's container (SECURITY.md, "Driver"). */
  private async createOptions(
    kind: {
      image: string;
      size: string;
      snapshot?: { id: string; workspace_id: string };
      screen?: { width: number; height: number };
    },
    name: string,
    hostname: string,
    labels: Record<string, string>,
    signal: AbortSignal,
  ): Promise<ContainerCreateOptions> {
    const image = kind.snapshot
      ? await this.snapshotImage(kind.snapshot)
      : await this.ensureImage(kind.image, signal);
    return {
      name,
      Image: image.reference,
      Hostname: hostname,
      User: ROOT_USERS.has(image.user) ? FALLBACK_USER : image.user,
      Labels: labels,
      // The desktop image's entry script sizes its screen from it (design §18).
      ...(kind.screen ? { Env: [screenEnv(kind.screen)] } : {}),
      NetworkDisabled: true,
      HostConfig: {
        ...(await this.limits(kind.size)),
        NetworkMode: 'none',
        Privileged: false,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m' },
        // The files API's only writable place; `v: true` on remove deletes the volume with the container.
        Mounts: [{ Type: 'volume', Source: '', Target: HOME }], // no source: anonymous
        Init: true,
        IpcMode: 'private',
        RestartPolicy: { Name: 'no' },
        LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
      },
      abortSignal: signal,
    };
  }

  private async ensureImage(
    imageName: string,
    signal: AbortSignal,
  ): Promise<{ reference: string; user: string }> {
    const entry = await this.catalog.image(imageName);
    if (!entry?.reference)
      throw new DriverError('unavailable', `the image "${imageName}" cannot run on this service's hosts`, {
        driver: this.name,
        image: imageName,
      });
    const reference = entry.reference;
    let image = await absentOn404(this.docker.getImage(reference).inspect());
    if (!image && this.pull === 'missing') {
      const stream = await this.docker.pull(reference, { abortSignal: signal });
      await new Promise<void>((resolve, reject) =>
        this.docker.modem.followProgress(stream, (error: Error | null) =>
          error ? reject(error) : resolve(),
        ),
      );
      image = await this.docker.getImage(reference).inspect();
    }
    if (!image) {
      this.log('docker driver: image not on this host', { image: imageName, reference });
      throw new DriverError(
        'unavailable',
        `the image "${imageName}" is not available on this host yet; delete this computer to free its name (GET /images lists the images that run)`,
        {
          driver: this.name,
          image: imageName,
        },
      );
    }
    return { reference, user: image.Config?.User ?? '' };
  }

  /** A computer created from a snapshot runs its image (design §4.2), which must be this deployment's. */
  private async snapshotImage(snapshot: {
    id: string;
    workspace_id: string;
  }): Promise<{ reference: string; user: string }> {
    const image = await this.snapshots.image(snapshot);
    if (!image)
      throw new DriverError('unavailable', 'the image of the snapshot is not on this host', {
        driver: this.name,
      });
    return { reference: snapshotReference(snapshot), user: image.Config?.User ?? '' };
  }

  private async limits(sizeName: string): Promise<HostConfig> {
    const size = await this.catalog.size(sizeName);
    if (!size)
      throw new DriverError('unavailable', `the size "${sizeName}" is not in the catalogue`, {
        driver: this.name,
      });
    const memory = size.memory_mib * 1024 * 1024;
    return {
      Memory: memory,
      MemorySwap: memory, // no swap beyond the memory limit
      NanoCpus: Math.round(Math.min(size.vcpus, this.hostCpus) * 1e9),
      PidsLimit: this.pidsLimit,
    };
  }

  private async expectRunning(computer: DriverComputer, signal: AbortSignal): Promise<ContainerInspectInfo> {
    const info = await this.inspect(computer, signal);
    if (!info?.State.Running)
      throw new DriverError(
        'internal',
        `the computer's container exited at once (code ${info?.State.ExitCode})`,
        {
          driver: this.name,
        },
      );
    return info;
  }

  private async remove(computer: DriverComputer, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      if (!(await this.inspect(computer, signal))) {
        await this.pool?.released(computer.id);
        return;
      }
      const status = await this.container(computer)
        .remove({ force: true, v: true, abortSignal: signal })
        .then(() => 204)
        .catch(unless(404, 409)); // 409: a removal already in progress; wait for it
      if (status !== 409) {
        await this.pool?.released(computer.id);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new DriverError('internal', 'the container could not be removed', { driver: this.name });
  }

  /** A `DriverError` for the operation; the Engine's own words go to the log only (they name host details). */
  private failure(action: DriverAction, error: unknown, signal: AbortSignal): unknown {
    if (error instanceof DriverError || signal.aborted) return error;
    const status = (error as { statusCode?: number }).statusCode;
    this.log('docker driver: the Engine refused an action', {
      action,
      status,
      error: (error as Error).message,
    });
    const socketError = (error as { code?: string }).code;
    if (
      status === undefined &&
      socketError &&
      /^(ENOENT|ECONNREFUSED|ECONNRESET|EPIPE|EACCES|ETIMEDOUT)$/.test(socketError)
    )
      return new DriverError('unavailable', 'the Docker Engine could not be reached', {
        driver: this.name,
        action,
      });
    if (status === undefined)
      return new DriverError('internal', `the computer could not be made to ${action}`, {
        driver: this.name,
        action,
      });
    return new DriverError('internal', `the Docker Engine refused to ${action} the computer`, {
      driver: this.name,
      action,
      engine_status: status,
    });
  }
}

/** A rejection handler that turns the Engine's answer `status` (e.g. 304 "already so") into a value. */
/** Whether a computer's screen is not the default one a pooled desktop container has. */
function ownScreen(computer: DriverComputer): boolean {
  const { screen_width: width, screen_height: height } = computer;
  return !!width && !!height && (width !== DEFAULT_SCREEN.width || height !== DEFAULT_SCREEN.height);
}

function unless(...statuses: number[]) {
  return (error: unknown): number => {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && statuses.includes(status)) return status;
    throw error;
  };
}

/** Whether `error` is the Engine's answer with one of `statuses`. */
/**
 * Whether an Engine call failed because of the Engine (a 5xx, its connection refused, reset or cut)
 * rather than the request: such a failure is worth a retry once the Engine is back.
 */
function engineFault(error: unknown): boolean {
  const { statusCode, code } = error as { statusCode?: number; code?: string };
  if (statusCode !== undefined) return statusCode >= 500;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT'].includes(code ?? '') ||
    /socket hang up|premature close/i.test(String((error as Error | undefined)?.message))
  );
}

function isStatus(error: unknown, ...statuses: number[]): boolean {
  const status = (error as { statusCode?: number }).statusCode;
  return status !== undefined && statuses.includes(status);
}

/** `undefined` when the Engine answers 404. */
async function absentOn404<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}
