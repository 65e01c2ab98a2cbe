import type Docker from 'dockerode';
import type { Queryable } from '../../platform/db/database.js';
import {
  type ComputerSnapshot,
  restingComputer,
  restingComputers,
  settleComputer,
} from '../repositories/operations/reconciler.js';
import type { ComputerState } from '../states.js';
import { containerName, isOurs, LABEL, labelFilter } from './labels.js';
import { POOL_LABEL } from './warm-pool.js';

export interface ReconcilerOptions {
  docker: Docker;
  db: Queryable;
  instance: string;
  /** The host whose Engine `docker` is (design §4.4): only its computers are compared. Null: computers without a host. */
  hostId?: string | null;
  /** How often every computer is compared with its container (`SVC_DOCKER_SWEEP_MS`). */
  sweepMs: number;
  /** Follow the Engine's event stream too (default true); the sweep alone still converges. */
  events?: boolean;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * Whether a container without the computer's labels is still that computer's: one a create claimed
   * from the warm pool (`WarmPool.owns`). Without it only labelled containers count.
   */
  owns?: (info: Docker.ContainerInspectInfo, computerId: string) => Promise<boolean>;
}

/** How long a sweep waits for the Engine's list of containers. */
const LIST_TIMEOUT_MS = 10_000;

/** Engine container states, as the resting computer state they mean. Absent: `failed`. */
const OBSERVED: Record<string, ComputerState> = {
  running: 'running',
  restarting: 'running',
  paused: 'running',
  created: 'stopped',
  exited: 'stopped',
  dead: 'stopped',
  removing: 'failed',
};

/**
 * Keeps computers true to their containers: the Engine is the truth. A computer at rest (`running` or
 * `stopped`, no operation in progress) whose container exited becomes `stopped`, one whose container
 * runs again becomes `running`, and one whose container is gone becomes `failed` (a resting state
 * from which `start` makes a new container, design §4). Fed by the Engine's event stream, filtered by
 * this deployment's labels, and by a sweep every `sweepMs` that catches whatever the stream missed.
 * Each change is a compare-and-set on the row as it was read before the Engine was asked, so a
 * computer an operation touched in between is left to that operation; every replica may run one.
 *
 * @example
 * const reconciler = new DockerReconciler({ docker, db, instance: 'default', sweepMs: 30_000 });
 * reconciler.start();
 * await reconciler.stop();
 */
export class DockerReconciler {
  private readonly options: ReconcilerOptions;
  private readonly log: NonNullable<ReconcilerOptions['log']>;
  private timer: NodeJS.Timeout | undefined;
  private stream: NodeJS.ReadableStream | undefined;
  private stopped = true;
  private pending = new Set<Promise<unknown>>();
  private readonly followUps = new Map<string, NodeJS.Timeout>();

  constructor(options: ReconcilerOptions) {
    this.options = options;
    this.log = options.log ?? (() => {});
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    if (this.options.events !== false) void this.follow();
    this.track(this.sweep());
    this.timer = setInterval(() => this.track(this.sweep()), this.options.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const timer of this.followUps.values()) clearTimeout(timer);
    this.followUps.clear();
    (this.stream as { destroy?: () => void } | undefined)?.destroy?.();
    await Promise.allSettled([...this.pending]);
  }

  /** Compares every computer at rest with its container; returns how many computers it moved. */
  async sweep(): Promise<number> {
    const { db, docker, instance } = this.options;
    // The rows first, then the Engine: a change the Engine shows is never older than the row it fixes.
    const rows = await restingComputers(db, this.options.hostId ?? null);
    if (rows.length === 0) return 0;
    // Bounded: an Engine that stopped answering must not hold a sweep (the next one asks again).
    const containers = await docker.listContainers({
      all: true,
      filters: { label: labelFilter(instance) },
      abortSignal: AbortSignal.timeout(LIST_TIMEOUT_MS),
    });
    const seen = new Map(containers.map((c) => [computerOf(instance, c.Labels, c.Names[0]), c.State]));
    let moved = 0;
    for (const row of rows) {
      if (await this.settle(row, observed(seen.get(row.id)))) moved += 1;
    }
    return moved;
  }

  /** Compares one computer with its container (what an event about it triggers). */
  async reconcile(computerId: string): Promise<boolean> {
    const { db, docker, instance } = this.options;
    const row = await restingComputer(db, computerId, this.options.hostId ?? null);
    if (!row) return false;
    // Inspect, not list: it answers from the container itself, where a list can lag an event behind.
    let info: Docker.ContainerInspectInfo | undefined;
    try {
      info = await docker
        .getContainer(containerName(instance, computerId))
        .inspect({ abortSignal: AbortSignal.timeout(LIST_TIMEOUT_MS) });
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    if (
      info &&
      !isOurs(info.Config.Labels, instance, computerId) &&
      !(await this.options.owns?.(info, computerId))
    )
      return false;
    return this.settle(row, observed(info?.State.Status));
  }

  /** An event about a computer: compare now, and once more a moment later in case the Engine lagged. */
  private touched(computerId: string): void {
    this.track(this.reconcile(computerId));
    if (this.followUps.has(computerId)) return;
    const timer = setTimeout(() => {
      this.followUps.delete(computerId);
      if (!this.stopped) this.track(this.reconcile(computerId));
    }, 1000);
    timer.unref();
    this.followUps.set(computerId, timer);
  }

  private async settle(row: ComputerSnapshot, state: ComputerState): Promise<boolean> {
    if (row.state === state) return false;
    const moved = await settleComputer(this.options.db, row, state);
    if (moved)
      this.log('docker driver: computer moved to match its container', {
        computer: row.id,
        from: row.state,
        to: state,
      });
    return moved;
  }

  private async follow(): Promise<void> {
    const { docker, instance } = this.options;
    while (!this.stopped) {
      try {
        const stream = await docker.getEvents({
          filters: {
            type: ['container'],
            label: labelFilter(instance),
            event: ['start', 'die', 'stop', 'kill', 'oom', 'destroy', 'pause', 'unpause'],
          },
        });
        this.stream = stream;
        if (this.stopped) break;
        // Events sent while the stream was down are not replayed: a sweep covers them.
        this.track(this.sweep());
        await this.read(stream);
      } catch (error) {
        if (!this.stopped) this.log('docker driver: event stream failed', { error: String(error) });
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 1000).unref());
    }
  }

  private read(stream: NodeJS.ReadableStream): Promise<void> {
    return new Promise((resolve) => {
      let buffered = '';
      stream.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf('\n');
          if (!line) continue;
          try {
            const event = JSON.parse(line) as { Actor?: { Attributes?: Record<string, string> } };
            const attributes = event.Actor?.Attributes ?? {};
            const computerId = computerOf(this.options.instance, attributes, attributes.name);
            if (computerId) this.touched(computerId);
          } catch {
            // not an event: ignored
          }
        }
      });
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', resolve);
    });
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      if (!this.stopped) this.log('docker driver: reconciliation failed', { error: String(error) });
    });
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}

/**
 * The computer a container stands for: its `svc.computer_id` label, or for a container a computer
 * claimed from the warm pool (it keeps the pool's labels) the id in its name `svc-<instance>-<id>`.
 * Undefined for a container still waiting in the pool (`svc-<instance>-pool-…`).
 */
function computerOf(
  instance: string,
  labels: Record<string, string>,
  name: string | undefined,
): string | undefined {
  const labelled = labels[LABEL.computer];
  if (labelled) return labelled;
  if (labels[POOL_LABEL] === undefined || name === undefined) return undefined;
  const prefix = `${containerName(instance, '')}`;
  const bare = name.replace(/^\//, '');
  if (!bare.startsWith(prefix) || bare.startsWith(`${prefix}pool-`)) return undefined;
  return bare.slice(prefix.length);
}

function observed(engineState: string | undefined): ComputerState {
  return (engineState && OBSERVED[engineState]) || 'failed';
}
