import { Agent } from 'node:http';
import { Agent as TlsAgent } from 'node:https';
import Docker from 'dockerode';
import type { DockerCatalog } from '../computers/docker/catalog.js';
import type { DockerSection } from '../computers/docker/config.js';
import { DockerDriver } from '../computers/docker/docker-driver.js';
import { DockerReconciler } from '../computers/docker/reconciler.js';
import type {
  ComputerDriver,
  ComputerSnapshots,
  DriverAction,
  DriverComputer,
  DriverContext,
  DriverOutcome,
  ExecRequest,
  ExecResult,
  SnapshotTarget,
} from '../computers/driver.js';
import { DriverError } from '../computers/driver.js';
import type { FilesSection } from '../computers/files/config.js';
import type { ComputerFiles } from '../computers/files/driver.js';
import type { ProcessDriver } from '../computers/processes/driver.js';
import type { TerminalDriver } from '../computers/terminals/driver.js';
import type { Database, Queryable } from '../platform/db/database.js';
import { HOST_KEYS, SecretBox } from '../platform/secrets.js';
import type { FleetSection } from './config.js';
import {
  type HostRow,
  hostStatuses,
  markUnreachableComputers,
  recordHeartbeat,
} from './repositories/hosts.js';

/** How long a heartbeat waits for a host's Engine to answer. */
const PING_TIMEOUT_MS = 2000;
/** How long a new host's Engine is asked for its CPU count before its driver is made without it. */
const INFO_TIMEOUT_MS = 3000;

export interface FleetDriverOptions {
  db: Database;
  catalog: DockerCatalog;
  config: DockerSection & FleetSection & Partial<FilesSection>;
  /** The server's secret key: it opens the client keys of remote Engines (`hosts.tls_key_sealed`). */
  secretKey?: Uint8Array;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** One host as this replica runs it: its Engine client, the driver on it, its reconciler. */
interface HostRuntime {
  row: HostRow;
  docker: Docker;
  driver: DockerDriver;
  reconciler: DockerReconciler;
  /** What this replica's last heartbeat of the host found. */
  answering: boolean;
  cordoned: boolean;
  /** Its ping in flight: one at a time per host. */
  pinging?: Promise<void> | undefined;
}

/**
 * The Docker driver over a fleet of hosts (design §4.4): each host is a Docker Engine registered in
 * the `hosts` table, and each computer lives on the host its create was placed on (`host_id`).
 * Every call for a computer — its actions, `exec`, files, snapshots — goes to that host's Engine, on
 * whichever replica serves it. Per host, this replica runs one {@link DockerDriver} (with its exec
 * agents and warm pool) and one {@link DockerReconciler} (its event stream and sweep, over that host's
 * computers only). A host registered while the replica runs is picked up by the next heartbeat, or
 * at once by the first call for one of its computers: no restart.
 *
 * The heartbeat (every `SVC_HOST_HEARTBEAT_MS`) pings every host, bounded, and records that it
 * answered; then the resting computers of every host without a heartbeat for `SVC_HOST_UNHEALTHY_MS`
 * move to `unknown`. A host that answers again is swept at once, which brings its `unknown` computers
 * back to what its Engine has.
 *
 * @example
 * const driver = new FleetDriver({ db, catalog: databaseCatalog(db), config });
 * await driver.start();
 * await driver.run('start', computer, { signal, progress: async () => {} }); // on computer.host_id's Engine
 * await driver.stop();
 */
export class FleetDriver implements ComputerDriver {
  readonly name = 'docker';
  readonly fleet = true;
  readonly files: ComputerFiles;
  readonly snapshots: ComputerSnapshots;
  /** Terminals, on each computer's host (design §17). */
  readonly terminals: TerminalDriver = {
    open: async (computer, request) =>
      (await this.runtime(computer)).driver.terminals.open(computer, request),
  };
  /** Attached helper programs, on each computer's host (the desktop's helper). */
  readonly processes: ProcessDriver = {
    start: async (computer, request) =>
      (await this.runtime(computer)).driver.processes.start(computer, request),
  };
  private readonly options: FleetDriverOptions;
  private readonly log: NonNullable<FleetDriverOptions['log']>;
  private readonly hosts = new Map<string, HostRuntime>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private started = false;
  private readonly box: SecretBox | undefined;

  constructor(options: FleetDriverOptions) {
    this.options = options;
    this.box = options.secretKey && new SecretBox(options.secretKey, HOST_KEYS);
    this.log = options.log ?? (() => {});
    this.files = this.routedFiles();
    this.snapshots = {
      take: async (computer, snapshot, context) =>
        (await this.runtime(computer)).driver.snapshots.take(computer, snapshot, context),
      remove: async (snapshot: SnapshotTarget, signal?: AbortSignal) => {
        const runtime = snapshot.host_id ? await this.runtimeOf(snapshot.host_id) : undefined;
        if (!runtime)
          throw new DriverError('unavailable', "the snapshot's host is not available", { driver: 'docker' });
        await runtime.driver.snapshots.remove(snapshot, signal);
      },
    };
  }

  /** The hosts this replica runs now, by id (tests and metrics read it). */
  get hostIds(): string[] {
    return [...this.hosts.keys()];
  }

  /** The driver of one host (tests reach a host's warm pool through it). */
  hostDriver(hostId: string): DockerDriver | undefined {
    return this.hosts.get(hostId)?.driver;
  }

  async run(
    action: DriverAction,
    computer: DriverComputer,
    context: DriverContext,
  ): Promise<DriverOutcome | undefined> {
    return (await this.runtime(computer)).driver.run(action, computer, context);
  }

  async exec(computer: DriverComputer, request: ExecRequest): Promise<ExecResult> {
    return (await this.runtime(computer)).driver.exec(computer, request);
  }

  /** Whether some host that answers has the image (GET /images shows `available`). */
  async imageAvailable(image: string, db?: Queryable): Promise<boolean> {
    // The heartbeat keeps the hosts current; only a replica that has none yet reads them here.
    if (this.hosts.size === 0) await this.refresh();
    const answering = [...this.hosts.values()].filter((host) => host.answering || !this.started);
    const answers = await Promise.all(answering.map((host) => host.driver.imageAvailable(image, db)));
    return answers.some(Boolean);
  }

  /** Whether every host that answers lacks the image (and one answers): a create of it is refused. */
  async imageMissing(image: string, db?: Queryable): Promise<boolean> {
    if (this.hosts.size === 0) await this.refresh();
    const answering = [...this.hosts.values()].filter((host) => host.answering || !this.started);
    if (answering.length === 0) return false;
    const answers = await Promise.all(answering.map((host) => host.driver.imageMissing(image, db)));
    return answers.every(Boolean);
  }

  /** Loads the hosts, and starts the heartbeat, and every host's reconciler and warm pool. */
  async start(): Promise<void> {
    this.started = true;
    await this.refresh();
    for (const host of this.hosts.values()) this.startHost(host);
    await this.heartbeat();
    this.timer = setInterval(() => {
      // A host that hangs holds this beat back one period at most, not the next beats of the others.
      this.beating ??= this.heartbeat({ pingWaitMs: this.options.config.fleet.heartbeatMs }).finally(() => {
        this.beating = undefined;
      });
    }, this.options.config.fleet.heartbeatMs);
    this.timer.unref();
  }

  /** Stops the heartbeat and every host's reconciler, warm pool and exec agents. */
  async stop(): Promise<void> {
    this.started = false;
    clearInterval(this.timer);
    await this.beating;
    await Promise.all([...this.hosts.values()].map((host) => host.pinging));
    await Promise.all([...this.hosts.values()].map((host) => this.stopHost(host)));
  }

  /**
   * One heartbeat: the hosts read again (new ones run, removed ones stop), each pinged (bounded) and
   * its answer recorded, then the computers of hosts that stopped answering marked `unknown`. With
   * `pingWaitMs` (the timer's beats) a ping is waited for that long at most and goes on meanwhile:
   * an Engine that hangs (its ping bounded by 2 s) must not keep the heartbeats of the others from
   * being recorded for longer than `SVC_HOST_UNHEALTHY_MS`, or their computers would go `unknown` too.
   *
   * @example
   * await driver.heartbeat(); // tests call it instead of waiting for the timer: every ping awaited
   */
  async heartbeat(options: { pingWaitMs?: number } = {}): Promise<void> {
    const { db, config } = this.options;
    try {
      await this.refresh();
      await Promise.all([...this.hosts.values()].map((host) => this.pingOf(host, options.pingWaitMs)));
      const moved = await markUnreachableComputers(db, config.fleet.unhealthyAfterMs);
      if (moved > 0)
        this.log('fleet: computers of hosts that stopped answering are unknown', { computers: moved });
    } catch (error) {
      this.log('fleet: heartbeat failed', { error: String(error) });
    }
  }

  /** The host's ping in flight, or a new one; waited for at most `waitMs` when given. Never rejects. */
  private pingOf(host: HostRuntime, waitMs?: number): Promise<void> {
    host.pinging ??= this.ping(host)
      .catch((error: unknown) =>
        this.log('fleet: heartbeat failed', { host: host.row.name, error: String(error) }),
      )
      .finally(() => {
        host.pinging = undefined;
      });
    const pinging = host.pinging;
    if (waitMs === undefined) return pinging;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      void pinging.finally(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async ping(host: HostRuntime): Promise<void> {
    let engineId: string;
    try {
      engineId = (await engineInfo(host.docker, PING_TIMEOUT_MS)).ID;
    } catch (error) {
      if (host.answering)
        this.log('fleet: a host stopped answering', { host: host.row.name, error: String(error) });
      host.answering = false;
      return;
    }
    if (!(await recordHeartbeat(this.options.db, host.row.id, engineId))) {
      if (host.answering || host.row.engine_id === null)
        this.log('fleet: a host answers as another Engine than the one registered; refused', {
          host: host.row.name,
        });
      host.answering = false;
      return;
    }
    const back = !host.answering;
    host.answering = true;
    // Back (or first seen): its computers compared with its containers now, `unknown` ones settled.
    if (back && this.started) await host.reconciler.sweep().catch(() => {});
  }

  /** The runtime of the computer's host; `unavailable` when it has none or its host is gone. */
  private async runtime(computer: DriverComputer): Promise<HostRuntime> {
    const runtime = computer.host_id ? await this.runtimeOf(computer.host_id) : undefined;
    if (!runtime)
      throw new DriverError('unavailable', "the computer's host is not available", { driver: 'docker' });
    return runtime;
  }

  private async runtimeOf(hostId: string): Promise<HostRuntime | undefined> {
    if (!this.hosts.has(hostId)) await this.refresh();
    return this.hosts.get(hostId);
  }

  /** Reads the hosts again: a runtime for each new one, removed ones stopped. One refresh at a time. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const rows = await hostStatuses(this.options.db, this.options.config.fleet.unhealthyAfterMs);
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.id);
      const known = this.hosts.get(row.id);
      if (known && known.row.engine === row.engine) {
        known.row = row;
        known.cordoned = row.cordoned;
        continue;
      }
      if (known) {
        this.hosts.delete(row.id);
        await this.stopHost(known);
      }
      let runtime: HostRuntime;
      try {
        runtime = await this.makeRuntime(row);
      } catch (error) {
        // One host that cannot be reached as written (its TLS key does not open) is that host's
        // problem alone: it stays without a runtime, unhealthy, and the rest of the fleet goes on.
        this.log('fleet: a host cannot be used as registered', { host: row.name, error: String(error) });
        continue;
      }
      this.hosts.set(row.id, runtime);
      if (this.started) this.startHost(runtime);
    }
    for (const [id, runtime] of this.hosts)
      if (!seen.has(id)) {
        this.hosts.delete(id);
        await this.stopHost(runtime);
      }
  }

  private async makeRuntime(row: HostRow): Promise<HostRuntime> {
    const { db, catalog, config } = this.options;
    const docker = engineClient(row, this.box);
    let hostCpus: number | undefined;
    try {
      hostCpus = (await engineInfo(docker, INFO_TIMEOUT_MS)).NCPU;
    } catch {
      // Not answering now: its sizes are not capped to its CPUs until this replica restarts.
    }
    const runtime: HostRuntime = {
      row,
      docker,
      answering: false,
      cordoned: row.cordoned,
    } as HostRuntime;
    const hostLog = (message: string, fields?: Record<string, unknown>) =>
      this.log(message, { host: row.name, ...fields });
    runtime.driver = new DockerDriver({
      docker,
      catalog,
      instance: config.docker.instance,
      pull: config.docker.pull,
      ...(hostCpus === undefined ? {} : { hostCpus }),
      pool: {
        db,
        hostId: row.id,
        active: () => !runtime.cordoned,
        targets: config.docker.pool.targets,
        maxContainers: config.docker.pool.maxContainers,
        maxMemoryMib: config.docker.pool.maxMemoryMib,
        refillMs: config.docker.pool.refillMs,
      },
      ...(config.docker.execAgent === false ? { execAgent: false } : {}),
      ...(config.files
        ? { filesQuotaBytes: config.files.quotaBytes, filesMaxArchiveEntries: config.files.maxEntries }
        : {}),
      log: hostLog,
    });
    runtime.reconciler = new DockerReconciler({
      docker,
      db,
      instance: config.docker.instance,
      hostId: row.id,
      sweepMs: config.docker.sweepMs,
      owns: (info, computerId) => runtime.driver.pool?.owns(info, computerId) ?? Promise.resolve(false),
      log: hostLog,
    });
    return runtime;
  }

  private startHost(host: HostRuntime): void {
    host.reconciler.start();
    host.driver.pool?.start();
  }

  private async stopHost(host: HostRuntime): Promise<void> {
    await host.driver.pool?.stop();
    await host.reconciler.stop();
    host.driver.close();
  }

  /** The files API of each computer's host. */
  private routedFiles(): ComputerFiles {
    const on = async (computer: DriverComputer) => (await this.runtime(computer)).driver.files;
    return {
      stat: async (computer, path, signal) => (await on(computer)).stat(computer, path, signal),
      list: async (computer, path, signal) => (await on(computer)).list(computer, path, signal),
      read: async (computer, path, signal) => (await on(computer)).read(computer, path, signal),
      write: async (computer, path, body, options) =>
        (await on(computer)).write(computer, path, body, options),
      remove: async (computer, path, options) => (await on(computer)).remove(computer, path, options),
      readArchive: async (computer, path, signal) => (await on(computer)).readArchive(computer, path, signal),
      writeArchive: async (computer, path, tar, options) =>
        (await on(computer)).writeArchive(computer, path, tar, options),
    };
  }
}

/** `GET /info` of an Engine, bounded (dockerode takes `abortSignal`; its types do not list it). */
function engineInfo(
  docker: Docker,
  timeoutMs: number,
): Promise<{ ID: string; NCPU: number; MemTotal: number }> {
  const info = docker.info.bind(docker) as unknown as (options: {
    abortSignal: AbortSignal;
  }) => Promise<{ ID: string; NCPU: number; MemTotal: number }>;
  return info({ abortSignal: AbortSignal.timeout(timeoutMs) });
}

/**
 * A client of a host's Engine, its connections kept alive (a command's create and inspect reuse one;
 * docker-modem passes `agent` to every request, which @types/dockerode does not list): a local socket
 * (`unix:///path`), or a remote Engine over mutual TLS (`https://host:port`: the Engine's certificate
 * checked against the host's CA, this side's client certificate and key, the key opened from its seal
 * by `box`). Anything else is refused.
 *
 * @example
 * const docker = engineClient(host, box); // host.engine = 'unix:///var/run/docker.sock'
 */
export function engineClient(
  host: Pick<HostRow, 'id' | 'engine' | 'name' | 'tls_ca_pem' | 'tls_cert_pem' | 'tls_key_sealed'>,
  box?: SecretBox,
): Docker {
  if (host.engine.startsWith('unix://')) {
    const options: Docker.DockerOptions & { agent: Agent } = {
      socketPath: host.engine.slice('unix://'.length),
      agent: new Agent({ keepAlive: true }),
    };
    return new Docker(options);
  }
  const url = URL.canParse(host.engine) ? new URL(host.engine) : undefined;
  if (url?.protocol !== 'https:' || !host.tls_ca_pem || !host.tls_cert_pem || !host.tls_key_sealed || !box)
    throw new DriverError(
      'unavailable',
      `host ${host.name}: its Engine address or TLS material is not usable`,
      {
        driver: 'docker',
      },
    );
  const tls = {
    ca: host.tls_ca_pem,
    cert: host.tls_cert_pem,
    key: box.open(host.id, Buffer.from(host.tls_key_sealed, 'base64')),
  };
  const options: Docker.DockerOptions & { agent: TlsAgent } = {
    protocol: 'https',
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || 2376),
    ...tls,
    agent: new TlsAgent({ keepAlive: true, ...tls }),
  };
  return new Docker(options);
}
