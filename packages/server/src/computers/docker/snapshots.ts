import type Docker from 'dockerode';
import type { ContainerInspectInfo } from 'dockerode';
import type { ComputerSnapshots, DriverComputer, DriverContext, SnapshotTarget } from '../driver.js';
import { DriverError } from '../driver.js';
import { LABEL } from './labels.js';

/** Labels on a snapshot's image, beside the deployment's: which snapshot, of which workspace. */
export const SNAPSHOT_LABEL = { snapshot: 'svc.snapshot_id' } as const;

/** Where the computer's files live (the driver's volume): what a snapshot copies into its image. */
const HOME = '/home';

/**
 * The image of a snapshot, in a repository of its workspace: `svc-snapshot/<workspace id>:<snapshot id>`.
 *
 * @example
 * snapshotReference({ id: '01kd…', workspace_id: '01kc…' }); // 'svc-snapshot/01kc…:01kd…'
 */
export function snapshotReference(snapshot: SnapshotTarget): string {
  return `svc-snapshot/${snapshot.workspace_id}:${snapshot.id}`;
}

/** The labels of a snapshot's image. */
export function snapshotLabels(instance: string, snapshot: SnapshotTarget): Record<string, string> {
  return {
    [LABEL.managed]: 'true',
    [LABEL.instance]: instance,
    [LABEL.workspace]: snapshot.workspace_id,
    [SNAPSHOT_LABEL.snapshot]: snapshot.id,
  };
}

/** Whether image `labels` mark this deployment's image of `snapshot`. */
function isOurSnapshot(
  labels: Record<string, string> | undefined | null,
  instance: string,
  snapshot: SnapshotTarget,
): boolean {
  return (
    labels?.[LABEL.managed] === 'true' &&
    labels[LABEL.instance] === instance &&
    labels[SNAPSHOT_LABEL.snapshot] === snapshot.id &&
    labels[LABEL.workspace] === snapshot.workspace_id
  );
}

export interface DockerSnapshotsOptions {
  docker: Docker;
  instance: string;
  /** The computer's container, checked ours by its labels; undefined when there is none. */
  inspect(computer: DriverComputer, signal: AbortSignal): Promise<ContainerInspectInfo | undefined>;
}

/**
 * Snapshots on a Docker Engine (design §4.2). A `docker commit` keeps the container's own layer but
 * no volume, and a computer's files are on its `/home` volume (the root is read-only), so `take`:
 * commits the container (not paused: its layer cannot change, the root being read-only) to an untagged image; makes a helper container of it,
 * never started, with no volume; copies the computer's `/home` into it through the archive endpoints
 * (modes and owners kept); commits that as `svc-snapshot/<workspace>:<snapshot>`, labelled; removes
 * the helper. A computer created from it gets a fresh `/home` volume, which the Engine seeds from the
 * image's `/home`: the files come back. Repeatable: a tagged image of ours ends it at once; a helper
 * left by a replica that died is removed first.
 *
 * @example
 * const snapshots = new DockerSnapshots({ docker, instance, inspect: (c, s) => driver.inspect(c, s) });
 */
export class DockerSnapshots implements ComputerSnapshots {
  private readonly docker: Docker;
  private readonly instance: string;
  private readonly inspect: DockerSnapshotsOptions['inspect'];

  constructor(options: DockerSnapshotsOptions) {
    this.docker = options.docker;
    this.instance = options.instance;
    this.inspect = options.inspect;
  }

  async take(
    computer: DriverComputer,
    snapshot: SnapshotTarget,
    context: DriverContext,
  ): Promise<{ sizeBytes: number | null }> {
    const { signal } = context;
    const reference = snapshotReference(snapshot);
    const done = await this.image(snapshot);
    if (done) return { sizeBytes: done.Size ?? null };
    const info = await this.inspect(computer, signal);
    if (!info)
      throw new DriverError('not_found', "the computer's container is gone; no snapshot was taken", {
        driver: 'docker',
      });
    const source = this.docker.getContainer(info.Id);
    const base = (await source.commit({
      _query: {
        container: info.Id,
        // Not paused: the container's own layer cannot change while it runs (the root is read-only;
        // /tmp is a tmpfs, never committed), and a container paused while an exec agent holds an
        // attached exec was seen to stay frozen, the Engine then waiting on it for every image removal.
        // /home is copied below, as it is at that moment.
        pause: false,
        comment: `svc snapshot ${snapshot.id}: the container's layer`,
      },
      // Labelled as the snapshot's too, so that `sweep` finds it if a takeover leaves it behind.
      _body: { Labels: { ...(info.Config.Labels ?? {}), ...snapshotLabels(this.instance, snapshot) } },
      abortSignal: signal,
    })) as { Id: string };
    await context.progress(30);
    const helperName = `svc-${this.instance}-snapshot-${snapshot.id}`;
    await this.removeHelper(helperName);
    const helper = await this.docker.createContainer({
      name: helperName,
      Image: base.Id,
      Labels: { ...snapshotLabels(this.instance, snapshot), [LABEL.managed]: 'false' },
      NetworkDisabled: true,
      HostConfig: { NetworkMode: 'none' },
      abortSignal: signal,
    });
    try {
      const archive = await source.getArchive({ path: HOME, abortSignal: signal });
      await helper.putArchive(archive, { path: '/', abortSignal: signal });
      await context.progress(70);
      const [repo, tag] = reference.split(':') as [string, string];
      await helper.commit({
        _query: { container: helper.id, repo, tag, comment: `svc snapshot ${snapshot.id}` },
        _body: { Labels: { ...(info.Config.Labels ?? {}), ...snapshotLabels(this.instance, snapshot) } },
        abortSignal: signal,
      });
    } finally {
      await helper.remove({ force: true, v: true }).catch(() => {});
    }
    const image = await this.image(snapshot);
    if (!image)
      throw new DriverError('internal', "the snapshot's image vanished as it was made", { driver: 'docker' });
    await context.progress(100);
    return { sizeBytes: image.Size ?? null };
  }

  /** Removes the snapshot's image (its untagged parent goes with it); one already gone is fine. */
  async remove(snapshot: SnapshotTarget, signal?: AbortSignal): Promise<void> {
    const image = await this.image(snapshot);
    if (image)
      // `force`: a computer created from it keeps running on its layers; only the tag goes then.
      await this.docker
        .getImage(snapshotReference(snapshot))
        .remove({ force: true, ...(signal ? { abortSignal: signal } : {}) })
        .catch((error: unknown) => {
          if ((error as { statusCode?: number }).statusCode !== 404) throw error;
        });
    await this.sweep(snapshot.id);
  }

  /**
   * Removes what is left of a deleted snapshot: its untagged images (labelled with its id, of this
   * deployment) that no container uses any more. Run when the snapshot is deleted and when a computer
   * created from it is deleted, so the last of them takes the layers with it. An image still in use
   * (409) or already gone (404) is left; a tagged one is a snapshot that still exists.
   */
  async sweep(snapshotId: string): Promise<void> {
    const images = await this.docker.listImages({
      all: true,
      filters: { label: [`${LABEL.instance}=${this.instance}`, `${SNAPSHOT_LABEL.snapshot}=${snapshotId}`] },
    });
    for (const image of images) {
      if ((image.RepoTags ?? []).some((tag) => tag !== '<none>:<none>')) continue;
      await this.docker
        .getImage(image.Id)
        .remove()
        .catch((error: unknown) => {
          const status = (error as { statusCode?: number }).statusCode;
          if (status !== 404 && status !== 409) throw error;
        });
    }
  }

  /**
   * The snapshot's image when the Engine has it; an image of that name without this snapshot's
   * labels is a stranger's, refused (never removed nor used).
   */
  async image(snapshot: SnapshotTarget): Promise<Docker.ImageInspectInfo | undefined> {
    let image: Docker.ImageInspectInfo;
    try {
      image = await this.docker.getImage(snapshotReference(snapshot)).inspect();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      throw error;
    }
    if (!isOurSnapshot(image.Config?.Labels, this.instance, snapshot))
      throw new DriverError('internal', 'an image of that name exists that this service does not manage', {
        driver: 'docker',
      });
    return image;
  }

  /** Removes a helper container of an earlier attempt (a takeover), when it is one of ours. */
  private async removeHelper(name: string): Promise<void> {
    const container = this.docker.getContainer(name);
    const found = await container.inspect().catch(() => undefined);
    if (!found) return;
    if (
      found.Config.Labels?.[LABEL.instance] !== this.instance ||
      !found.Config.Labels?.[SNAPSHOT_LABEL.snapshot]
    )
      throw new DriverError('internal', 'a container of that name exists that this service does not manage', {
        driver: 'docker',
      });
    await container.remove({ force: true, v: true }).catch(() => {});
  }
}
