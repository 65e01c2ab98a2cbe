import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { Database } from '../../platform/db/database.js';
import type { DriverComputer } from '../driver.js';
import {
  claimPoolContainer,
  forgetPoolClaim,
  forgetPoolContainer,
  knownPoolNames,
  markPoolReady,
  poolClaimOf,
  reservePoolPlaces,
  unclaimedPoolRows,
} from '../repositories/warm-pool.js';
import type { WarmPoolTarget } from './config.js';
import { containerName, LABEL } from './labels.js';
import { PoolDemand } from './pool-demand.js';

/** Label of a pooled container: `<image>:<size>` it was made for. Set at creation, kept once claimed. */
export const POOL_LABEL = 'svc.pool';

/** A `creating` row older than this lost its maker (a replica that died mid-way): the sweep settles it. */
const STALE_CREATING_MS = 60_000;
/** A kind whose container could not be made is not tried again for this long (an image not built yet). */
const FAILED_KIND_BACKOFF_MS = 30_000;
/** A ready container beyond its kind's count is removed once it has waited this long unclaimed. */
const TRIM_IDLE_MS = 30_000;
/** Remembered claims (computer id → container id); past it the memory starts over (the database stays). */
const MAX_REMEMBERED_CLAIMS = 10_000;
/** Containers made at once by one replica's pool: a burst of claims is refilled in parallel, up to this. */
const PARALLEL_FILLS = 3;

export interface WarmPoolOptions {
  docker: Docker;
  db: Database;
  /** The `svc.instance` label value of this deployment. */
  instance: string;
  /** The host this pool is on (design §4.4): its rows carry it; other hosts' pools are apart. */
  hostId?: string | null;
  /**
   * Whether the pool may hold ready containers now; false (a cordoned host) removes the ready ones
   * and makes none. Default: always.
   */
  active?: () => boolean;
  /** How many ready containers of which image and size (`SVC_POOL`). */
  targets: readonly WarmPoolTarget[];
  /** The most unclaimed containers in all (`SVC_POOL_MAX_CONTAINERS`). */
  maxContainers: number;
  /**
   * The most memory the unclaimed containers' sizes add up to (`SVC_POOL_MAX_MEMORY_MIB`), with each
   * size's memory (`memoryMib`): what the targets may grow to with demand. Without both, they do not grow.
   */
  maxMemoryMib?: number;
  memoryMib?: (size: string) => Promise<number | undefined>;
  /** How many ready containers demand adds to each target (default: a {@link PoolDemand} on the clock). */
  demand?: PoolDemand;
  /** How often the pool is topped up and tidied, besides after every claim (`SVC_POOL_REFILL_MS`). */
  refillMs: number;
  /**
   * Makes and starts a container named `name` for `image` at `size` with `labels`, with everything a
   * computer's container has (the driver's own create options); answers the Engine's id.
   */
  make(
    name: string,
    target: WarmPoolTarget,
    labels: Record<string, string>,
    signal: AbortSignal,
  ): Promise<string>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * The warm pool (design §4.3): per image and size, a few containers made and started ahead of time,
 * which a create claims instead of making one, so that create → `running` and the first command skip
 * the Engine's create and start.
 *
 * - A pooled container is made exactly like a computer's (the driver's own options), named
 *   `svc-<instance>-pool-<id>` and labelled `svc.managed`, `svc.instance` and `svc.pool`; it belongs to
 *   no workspace and counts against no quota. Nothing reaches it before a claim: no request addresses a
 *   container by a pool name.
 * - The database holds every pooled container: a row is written (`creating`) before the container is
 *   made, `ready` once it runs, `claimed` by one computer in one `UPDATE … FOR UPDATE SKIP LOCKED`, so
 *   no container is handed out twice; a claimed row is never ready again, so a container anyone used
 *   is never handed out. The claim renames the container to the computer's name; the claimed row stays
 *   as the proof that the container, which keeps its pool labels (Docker cannot change labels), is that
 *   computer's ({@link WarmPool.owns}).
 * - Every replica tops the pool up every `refillMs` and at once after each claim, under an advisory
 *   lock, so replicas together never exceed the target; it makes up to three containers at once, each
 *   started with its exec agent before it is ready. **The pool follows demand** ({@link PoolDemand}):
 *   each target grows by the claims expected while one container is made, within
 *   `SVC_POOL_MAX_CONTAINERS` and `SVC_POOL_MAX_MEMORY_MIB`, and shrinks back when creates stop (a
 *   ready container beyond the count is removed after 30 s unclaimed). The same pass adopts what a replica that died left
 *   (a container that runs but whose row says `creating`), removes what it cannot use (a ready
 *   container gone or not running, a pooled container without a row) and never touches a claimed one.
 *
 * @example
 * const pool = new WarmPool({ docker, db, instance, targets: [{ image: 'busybox', size: 'small', count: 2 }], maxContainers: 16, refillMs: 2000, make });
 * pool.start();
 * const claimed = await pool.claim(computer);
 */
export class WarmPool {
  private readonly options: WarmPoolOptions;
  private readonly log: NonNullable<WarmPoolOptions['log']>;
  private readonly claims = new Map<string, string>();
  /** `image:size` → when its containers may be tried again, after one could not be made. */
  private readonly failedKinds = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private tidyNext = false;
  private stopping = new AbortController();
  private readonly demand: PoolDemand;
  /** Containers being made now, by this replica (at most {@link PARALLEL_FILLS}). */
  private readonly fills = new Set<Promise<void>>();

  constructor(options: WarmPoolOptions) {
    this.options = options;
    this.log = options.log ?? (() => {});
    this.demand = options.demand ?? new PoolDemand();
  }

  /** Whether creates of `image` at `size` are served from the pool. */
  serves(image: string, size: string): boolean {
    return this.options.targets.some((t) => t.image === image && t.size === size);
  }

  /** Starts topping the pool up now and every `refillMs`. Without targets it only tidies once. */
  start(): void {
    if (this.timer) return;
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.kick();
    this.timer = setInterval(() => this.kick(), this.options.refillMs);
    this.timer.unref();
  }

  /** Stops topping up and waits for a pass in progress; the pooled containers stay for the next start. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort();
    await this.settled();
  }

  /**
   * Claims a ready container for `computer` and renames it to the computer's container name; true when
   * the computer now has it. False when the pool has none ready (or it vanished): the caller makes a
   * container as without a pool.
   */
  async claim(computer: DriverComputer): Promise<boolean> {
    // A computer made from a snapshot needs the snapshot's image: no pooled container has its files.
    if (computer.snapshot_id || !this.serves(computer.image, computer.size)) return false;
    this.demand.asked(`${computer.image}:${computer.size}`);
    const { db, instance } = this.options;
    const claimed = await claimPoolContainer(
      db,
      { instance, hostId: this.options.hostId ?? null, image: computer.image, size: computer.size },
      computer.id,
    );
    if (!claimed) {
      this.kick(false);
      return false;
    }
    // Topped up once the rename is done, so that the refill's calls do not delay this create.
    try {
      return await this.take(computer, claimed);
    } finally {
      this.kick(false);
    }
  }

  private async take(
    computer: DriverComputer,
    claimed: { name: string; container_id: string },
  ): Promise<boolean> {
    const { docker, db, instance } = this.options;
    const name = containerName(instance, computer.id);
    try {
      await docker.getContainer(claimed.container_id).rename({ name });
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== 404 && status !== 409) throw error;
      // 404: the container is gone. 409: the name is taken, by this very container (a create run
      // again after a takeover renamed it already) or by another; only the first keeps the claim.
      const holder = await docker
        .getContainer(name)
        .inspect()
        .catch(() => undefined);
      if (status === 409 && holder?.Id === claimed.container_id) {
        this.remember(computer.id, claimed.container_id);
        return true;
      }
      if (status === 409)
        await docker
          .getContainer(claimed.container_id)
          .remove({ force: true, v: true })
          .catch(() => {});
      await forgetPoolClaim(db, computer.id);
      return false;
    }
    this.remember(computer.id, claimed.container_id);
    this.log('docker driver: a computer took a container from the warm pool', {
      computer: computer.id,
      image: computer.image,
      size: computer.size,
    });
    return true;
  }

  /**
   * Whether a container that carries the pool's labels (not a computer's) is `computerId`'s: the
   * pool's row says this computer claimed exactly this container.
   */
  async owns(info: Docker.ContainerInspectInfo, computerId: string): Promise<boolean> {
    const labels = info.Config.Labels ?? {};
    if (
      labels[LABEL.managed] !== 'true' ||
      labels[LABEL.instance] !== this.options.instance ||
      labels[POOL_LABEL] === undefined
    )
      return false;
    if (this.claims.get(computerId) === info.Id) return true;
    const claim = await poolClaimOf(this.options.db, computerId);
    if (claim?.container_id !== info.Id) return false;
    this.remember(computerId, info.Id);
    return true;
  }

  /** The Engine id of the container `computerId` claimed through this pool object, if it did. */
  claimedBy(computerId: string): string | undefined {
    return this.claims.get(computerId);
  }

  /** The computer's container is removed: its claim goes (no-op for a container made without the pool). */
  async released(computerId: string): Promise<void> {
    this.claims.delete(computerId);
    await forgetPoolClaim(this.options.db, computerId);
  }

  /**
   * One pass now (or once more after the one in progress): tidy (unless `tidy` is false: a claim's
   * or a fill's top-up, which should not wait for the Engine's list of containers), then top up.
   */
  kick(tidy = true): void {
    if (this.stopping.signal.aborted) return;
    this.tidyNext ||= tidy;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        const tidying = this.tidyNext;
        this.tidyNext = false;
        await this.pass(tidying).catch((error: unknown) =>
          this.log('docker driver: the warm pool could not be topped up', { error: String(error) }),
        );
      } while (this.again && !this.stopping.signal.aborted);
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Waits for the pass in progress and the containers being made, if any (tests, and the bench's "pool is full"). */
  async settled(): Promise<void> {
    while (this.running || this.fills.size > 0) {
      await this.running;
      await Promise.all(this.fills);
    }
  }

  /**
   * Each target's count now: the configured one, plus what demand adds ({@link PoolDemand}), the
   * additions within `SVC_POOL_MAX_CONTAINERS` and `SVC_POOL_MAX_MEMORY_MIB` (the configured counts
   * were checked against both at start-up).
   */
  private async counts(): Promise<Map<WarmPoolTarget, number>> {
    const { targets, maxContainers, maxMemoryMib, memoryMib } = this.options;
    const counts = new Map(targets.map((t) => [t, t.count] as const));
    if (maxMemoryMib === undefined || !memoryMib) return counts;
    const memory = new Map<WarmPoolTarget, number>();
    for (const t of targets) memory.set(t, (await memoryMib(t.size)) ?? Number.POSITIVE_INFINITY);
    let containers = targets.reduce((sum, t) => sum + t.count, 0);
    let mib = targets.reduce((sum, t) => sum + t.count * (memory.get(t) ?? 0), 0);
    for (const t of targets) {
      const each = memory.get(t) ?? Number.POSITIVE_INFINITY;
      const room = Math.min(maxContainers - containers, Math.floor((maxMemoryMib - mib) / each));
      const extra = Math.max(0, Math.min(this.demand.extra(`${t.image}:${t.size}`), room));
      counts.set(t, t.count + extra);
      containers += extra;
      mib += extra * each;
    }
    return counts;
  }

  private async pass(tidy: boolean): Promise<void> {
    if (tidy) await this.tidy();
    const { db, instance, targets, maxContainers } = this.options;
    const hostId = this.options.hostId ?? null;
    if (this.options.active && !this.options.active()) {
      // A cordoned host: nothing may claim these, so they go.
      for (const row of await unclaimedPoolRows(db, instance, hostId))
        if (row.state === 'ready' && (await forgetPoolContainer(db, row.name)))
          await this.options.docker
            .getContainer(row.container_id ?? row.name)
            .remove({ force: true, v: true })
            .catch(() => {});
      return;
    }
    const counts = await this.counts();
    await this.trim(counts);
    for (const target of targets) {
      if (this.stopping.signal.aborted) return;
      const kind = `${target.image}:${target.size}`;
      if ((this.failedKinds.get(kind) ?? 0) > Date.now()) continue;
      const free = PARALLEL_FILLS - this.fills.size;
      if (free <= 0) return;
      const names = await reservePoolPlaces(
        db,
        {
          instance,
          hostId,
          image: target.image,
          size: target.size,
          target: counts.get(target) ?? target.count,
          maxTotal: maxContainers,
          atMost: free,
        },
        () => `svc-${instance}-pool-${randomBytes(8).toString('hex')}`,
      );
      // Made in parallel, beside the passes: a claim meanwhile reserves its replacement at once.
      for (const name of names) {
        const fill = this.fill(name, target).then(async (made) => {
          if (made) return;
          // This kind cannot be made now (an image not built, the Engine refusing): it is tried
          // again after a while (the failed place was given back by `fill`).
          this.failedKinds.set(kind, Date.now() + FAILED_KIND_BACKOFF_MS);
        });
        const tracked = fill.finally(() => {
          this.fills.delete(tracked);
          // One more place may be reserved now (a burst of claims wanted more than PARALLEL_FILLS).
          this.kick(false);
        });
        this.fills.add(tracked);
      }
    }
  }

  /**
   * Removes ready containers beyond each kind's count that have waited longer than the decay of
   * demand: the pool shrinks back when creates stop, and a container that creates would claim within
   * moments is never removed (nor one another replica's demand keeps claiming).
   */
  private async trim(counts: Map<WarmPoolTarget, number>): Promise<void> {
    const { db, instance, docker } = this.options;
    const rows = await unclaimedPoolRows(db, instance, this.options.hostId ?? null);
    for (const [target, count] of counts) {
      const mine = rows.filter((row) => row.image === target.image && row.size === target.size);
      const idle = mine.filter(
        (row) => row.state === 'ready' && Date.now() - row.updated_at.getTime() > TRIM_IDLE_MS,
      );
      for (const row of idle.slice(0, Math.max(0, mine.length - count)))
        if (await forgetPoolContainer(db, row.name))
          await docker
            .getContainer(row.container_id ?? row.name)
            .remove({ force: true, v: true })
            .catch(() => {});
    }
  }

  /** Makes the container of a reserved place; false (its row gone, nothing left behind) when it fails. */
  private async fill(name: string, target: WarmPoolTarget): Promise<boolean> {
    const { docker, db, instance } = this.options;
    const labels = {
      [LABEL.managed]: 'true',
      [LABEL.instance]: instance,
      [POOL_LABEL]: `${target.image}:${target.size}`,
    };
    try {
      const started = Date.now();
      const id = await this.options.make(name, target, labels, this.stopping.signal);
      this.demand.made(`${target.image}:${target.size}`, Date.now() - started);
      if (await markPoolReady(db, name, id)) return true;
      // The row went meanwhile (a sweep of another replica judged it stale): not ours to keep.
      await docker
        .getContainer(id)
        .remove({ force: true, v: true })
        .catch(() => {});
      return true;
    } catch (error) {
      this.log('docker driver: a warm pool container could not be made', {
        image: target.image,
        size: target.size,
        error: error instanceof Error ? error.message : String(error),
      });
      if (await forgetPoolContainer(db, name))
        await docker
          .getContainer(name)
          .remove({ force: true, v: true })
          .catch(() => {});
      return false;
    }
  }

  /**
   * Settles what the pool's rows and the Engine disagree on: a ready container that is gone or does
   * not run is removed with its row; a `creating` row older than a minute (its maker died) becomes
   * ready when its container runs, else goes; a container named as a pooled one that has no row is
   * removed. Claimed containers are computers' and are never touched here.
   */
  private async tidy(): Promise<void> {
    const { docker, db, instance } = this.options;
    const prefix = `svc-${instance}-pool-`;
    const containers = await docker.listContainers({
      all: true,
      filters: { label: [`${LABEL.managed}=true`, `${LABEL.instance}=${instance}`, POOL_LABEL] },
    });
    const byName = new Map<string, Docker.ContainerInfo>();
    for (const container of containers) {
      const name = container.Names[0]?.replace(/^\//, '');
      if (name?.startsWith(prefix)) byName.set(name, container);
    }
    // The row goes first, and only while unclaimed: a container a create claims meanwhile is kept.
    const remove = async (name: string, containerId?: string | null) => {
      if (!(await forgetPoolContainer(db, name))) return;
      await docker
        .getContainer(containerId ?? name)
        .remove({ force: true, v: true })
        .catch(() => {});
    };
    for (const row of await unclaimedPoolRows(db, instance, this.options.hostId ?? null)) {
      const container = byName.get(row.name);
      if (row.state === 'ready') {
        if (container?.Id !== row.container_id || container.State !== 'running') {
          this.log('docker driver: a warm pool container is gone or stopped; removed', { name: row.name });
          await remove(row.name, row.container_id);
        }
      } else if (Date.now() - row.updated_at.getTime() > STALE_CREATING_MS) {
        if (container?.State === 'running') await markPoolReady(db, row.name, container.Id);
        else await remove(row.name);
      }
    }
    const known = await knownPoolNames(db, [...byName.keys()]);
    for (const [name, container] of byName)
      if (!known.has(name)) {
        this.log('docker driver: a pooled container without a row; removed', { name });
        await docker
          .getContainer(container.Id)
          .remove({ force: true, v: true })
          .catch(() => {});
      }
  }

  private remember(computerId: string, containerId: string): void {
    if (this.claims.size >= MAX_REMEMBERED_CLAIMS) this.claims.clear();
    this.claims.set(computerId, containerId);
  }
}
