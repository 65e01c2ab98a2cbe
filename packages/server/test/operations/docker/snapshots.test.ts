import { beforeAll, expect, test } from 'vitest';
import type { DockerCatalog } from '../../../src/computers/docker/catalog.js';
import { DockerDriver } from '../../../src/computers/docker/docker-driver.js';
import { LABEL } from '../../../src/computers/docker/labels.js';
import { SNAPSHOT_LABEL, snapshotReference } from '../../../src/computers/docker/snapshots.js';
import type { DriverComputer, DriverContext, ExecRequest } from '../../../src/computers/driver.js';
import { newId } from '../../../src/platform/ids.js';
import { describeDocker } from '../../support/docker.js';
import { TEST_IMAGE } from '../../support/docker-probe.js';

const catalog: DockerCatalog = {
  size: async (name) => ({ small: { vcpus: 1, memory_mib: 128 } })[name],
  image: async (name) => ({ busybox: { reference: TEST_IMAGE } })[name],
};

const context = (): DriverContext => ({ signal: new AbortController().signal, progress: async () => {} });

const run = (argv: string[]): ExecRequest => ({
  argv,
  timeoutMs: 10_000,
  maxOutputBytes: 4096,
  signal: new AbortController().signal,
});

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describeDocker('docker snapshots', (engine) => {
  let driver: DockerDriver;
  const workspaceId = newId();
  const computer = (overrides: Partial<DriverComputer> = {}): DriverComputer => ({
    id: newId(),
    workspace_id: workspaceId,
    name: `snap-${newId().slice(-6)}`,
    size: 'small',
    image: 'busybox',
    labels: {},
    ...overrides,
  });
  beforeAll(() => {
    driver = new DockerDriver({ docker: engine.docker, catalog, instance: engine.instance, hostCpus: 1 });
  });

  test('a snapshot of a running computer keeps its files under /home (modes too), not /tmp; a computer created from it has them; removing it removes the image', async () => {
    const source = computer();
    await driver.run('create', source, context());
    await driver.run('start', source, context());
    const write = await driver.exec(
      source,
      run([
        'sh',
        '-c',
        'mkdir -p /home/svc/project/deep && echo kept > /home/svc/project/deep/notes.txt && echo run > /home/svc/run.sh && chmod 750 /home/svc/run.sh && echo gone > /tmp/scratch',
      ]),
    );
    expect(write.exitCode).toBe(0);
    const snapshot = { id: newId(), workspace_id: workspaceId };
    const taken = await driver.snapshots.take(source, snapshot, context());
    expect(taken.sizeBytes).toBeGreaterThan(0);
    // The source kept running (the commit paused it for a moment only).
    expect((await driver.inspect(source))?.State.Running).toBe(true);
    const image = await engine.docker.getImage(snapshotReference(snapshot)).inspect();
    expect(image.Config.Labels).toMatchObject({
      [LABEL.managed]: 'true',
      [LABEL.instance]: engine.instance,
      [LABEL.workspace]: workspaceId,
      [SNAPSHOT_LABEL.snapshot]: snapshot.id,
    });
    // Taking it again (a takeover) finds it made.
    expect((await driver.snapshots.take(source, snapshot, context())).sizeBytes).toBe(taken.sizeBytes);

    const copy = computer({ snapshot_id: snapshot.id });
    await driver.run('create', copy, context());
    await driver.run('start', copy, context());
    const read = await driver.exec(
      copy,
      run(['sh', '-c', 'cat /home/svc/project/deep/notes.txt; stat -c %a:%u /home/svc/run.sh; ls /tmp']),
    );
    expect(text(read.stderr)).toBe('');
    expect(text(read.stdout)).toBe('kept\n750:1000\n');
    // The copy's files are its own: a write there leaves the source alone.
    await driver.exec(copy, run(['sh', '-c', 'echo changed > /home/svc/project/deep/notes.txt']));
    expect(text((await driver.exec(source, run(['cat', '/home/svc/project/deep/notes.txt']))).stdout)).toBe(
      'kept\n',
    );

    await driver.snapshots.remove(snapshot);
    await driver.snapshots.remove(snapshot); // already gone: fine
    await expect(engine.docker.getImage(snapshotReference(snapshot)).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    // The computer made from it keeps running on its layers; the last of them takes them away.
    expect((await driver.exec(copy, run(['cat', '/home/svc/run.sh']))).exitCode).toBe(0);
    const left = () =>
      engine.docker.listImages({
        all: true,
        filters: { label: [`${SNAPSHOT_LABEL.snapshot}=${snapshot.id}`] },
      });
    expect((await left()).length).toBeGreaterThan(0);
    await driver.run('delete', copy, context());
    expect(await left()).toEqual([]);
    await driver.run('delete', source, context());
  });

  test('a stopped computer can be snapshotted; a container that is gone fails not_found', async () => {
    const source = computer();
    await driver.run('create', source, context());
    await driver.run('start', source, context());
    await driver.exec(source, run(['sh', '-c', 'echo still > /home/svc/stopped.txt']));
    await driver.run('stop', source, context());
    const snapshot = { id: newId(), workspace_id: workspaceId };
    await driver.snapshots.take(source, snapshot, context());
    expect((await driver.inspect(source))?.State.Running).toBe(false);
    const copy = computer({ snapshot_id: snapshot.id });
    await driver.run('create', copy, context());
    await driver.run('start', copy, context());
    expect(text((await driver.exec(copy, run(['cat', '/home/svc/stopped.txt']))).stdout)).toBe('still\n');
    await driver.run('delete', copy, context());
    await driver.run('delete', source, context());
    await driver.snapshots.remove(snapshot);
    await expect(
      driver.snapshots.take(source, { id: newId(), workspace_id: workspaceId }, context()),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
