import Docker from 'dockerode';
import { beforeAll, expect, test } from 'vitest';
import type { DockerCatalog } from '../../../src/computers/docker/catalog.js';
import { DockerDriver } from '../../../src/computers/docker/docker-driver.js';
import { containerName, LABEL } from '../../../src/computers/docker/labels.js';
import type { DriverComputer, DriverContext, ExecRequest } from '../../../src/computers/driver.js';
import { DriverError } from '../../../src/computers/driver.js';
import { newId } from '../../../src/platform/ids.js';
import { describeDocker } from '../../support/docker.js';
import { TEST_IMAGE } from '../../support/docker-probe.js';

/** The catalogue of these tests: the migration's sizes and one locally built image. */
const catalog: DockerCatalog = {
  size: async (name) => ({ small: { vcpus: 2, memory_mib: 256 }, tiny: { vcpus: 1, memory_mib: 128 } })[name],
  image: async (name) =>
    ({
      busybox: { reference: TEST_IMAGE },
      gone: { reference: 'svc/not-built:0' },
      none: { reference: null },
    })[name],
};

const context = (): DriverContext => ({ signal: new AbortController().signal, progress: async () => {} });

const computer = (overrides: Partial<DriverComputer> = {}): DriverComputer => ({
  id: newId(),
  workspace_id: newId(),
  name: `box-${newId().slice(-6)}`,
  size: 'small',
  image: 'busybox',
  labels: {},
  ...overrides,
});

const execRequest = (argv: string[], overrides: Partial<ExecRequest> = {}): ExecRequest => ({
  argv,
  timeoutMs: 10_000,
  maxOutputBytes: 1024,
  signal: new AbortController().signal,
  ...overrides,
});

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describeDocker('docker driver', (engine) => {
  let driver: DockerDriver;
  beforeAll(() => {
    driver = new DockerDriver({ docker: engine.docker, catalog, instance: engine.instance, hostCpus: 1 });
  });

  test('create, start, stop, restart, delete: each one a container labelled for its computer, each safe to repeat', async () => {
    const box = computer();
    await driver.run('create', box, context());
    await driver.run('create', box, context()); // "make it so": no second container
    let [container, ...more] = await engine.containers(box.id);
    expect(more).toEqual([]);
    expect(container).toMatchObject({
      Names: [`/${containerName(engine.instance, box.id)}`],
      State: 'created',
      Labels: {
        [LABEL.managed]: 'true',
        [LABEL.instance]: engine.instance,
        [LABEL.computer]: box.id,
        [LABEL.workspace]: box.workspace_id,
      },
    });
    await driver.run('start', box, context());
    await driver.run('start', box, context());
    expect((await driver.inspect(box))?.State.Running).toBe(true);
    await driver.run('stop', box, context());
    await driver.run('stop', box, context());
    expect((await driver.inspect(box))?.State).toMatchObject({ Running: false, Status: 'exited' });
    await driver.run('start', box, context());
    const before = (await driver.inspect(box))?.State.StartedAt;
    await driver.run('restart', box, context());
    const after = await driver.inspect(box);
    expect(after?.State.Running).toBe(true);
    expect(after?.State.StartedAt).not.toBe(before);
    await driver.run('delete', box, context());
    await driver.run('delete', box, context()); // already gone: fine
    expect(await engine.containers(box.id)).toEqual([]);
    [container] = await engine.containers(box.id);
    expect(container).toBeUndefined();
  });

  test('containers run with no network, no capabilities or new privileges, read-only, non-root, and the limits of their size', async () => {
    const box = computer();
    await driver.run('start', box, context());
    const info = (await driver.inspect(box))!;
    expect(info.HostConfig).toMatchObject({
      NetworkMode: 'none',
      Privileged: false,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': expect.stringContaining('size=64m') },
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      NanoCpus: 1e9, // two vCPUs, capped to the host's one
      PidsLimit: 512,
    });
    expect(info.Config.User).toBe('1000:1000');
    // Not even attached to Docker's `none` network: no endpoint at all, only a loopback inside.
    expect([
      (info.Config as { NetworkDisabled?: boolean }).NetworkDisabled,
      Object.keys(info.NetworkSettings.Networks ?? {}),
    ]).toEqual([true, []]);
    const probe = await driver.exec(
      box,
      execRequest([
        '/bin/sh',
        '-c',
        'id -u; touch /x 2>/dev/null || echo read-only; echo ok > /tmp/t && cat /tmp/t; ls /sys/class/net',
      ]),
    );
    expect(text(probe.stdout).split('\n')).toEqual(['1000', 'read-only', 'ok', 'lo', '']);
    await driver.run('delete', box, context());
  });

  test('update brings a container to a new size (CPU and memory through the Engine update)', async () => {
    const box = computer();
    await driver.run('create', box, context());
    await driver.update({ ...box, size: 'tiny' });
    expect((await driver.inspect(box))?.HostConfig).toMatchObject({
      Memory: 128 * 1024 * 1024,
      NanoCpus: 1e9,
    });
    await driver.run('start', box, context()); // start applies the computer's own size again
    expect((await driver.inspect(box))?.HostConfig.Memory).toBe(256 * 1024 * 1024);
    await driver.run('delete', box, context());
  });

  test.each([
    ['not built on this host', 'gone', 'is not available on this host yet'],
    ['without a container image', 'none', "cannot run on this service's hosts"],
  ])('an image %s fails create with unavailable, and makes no container', async (_name, image, message) => {
    const box = computer({ image });
    const error = await driver.run('create', box, context()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DriverError);
    expect(error).toMatchObject({ code: 'unavailable', details: { image } });
    expect((error as DriverError).message).toContain(message);
    expect(await engine.containers(box.id)).toEqual([]);
  });

  test('stop of a computer whose container is gone fails with not_found; start makes a new one', async () => {
    const box = computer();
    const error = await driver.run('stop', box, context()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'not_found' });
    await driver.run('start', box, context());
    expect((await driver.inspect(box))?.State.Running).toBe(true);
    await driver.run('delete', box, context());
  });

  test('a container of the same name without our labels is refused, never touched', async () => {
    const box = computer();
    const stranger = await engine.docker.createContainer({
      name: containerName(engine.instance, box.id),
      Image: TEST_IMAGE,
      // This run's instance label (so cleanup finds it) but not the computer's: not ours to manage.
      Labels: { [LABEL.managed]: 'true', [LABEL.instance]: engine.instance },
      HostConfig: { NetworkMode: 'none' },
    });
    const error = await driver.run('delete', box, context()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'internal' });
    expect((await stranger.inspect()).Id).toBeTruthy();
    await stranger.remove({ force: true });
  });

  test('recover: a running container is running, a stopped one stopped, a removed one made again and left stopped', async () => {
    const box = computer();
    await driver.run('start', box, context());
    expect(await driver.run('recover', box, context())).toEqual({ state: 'running' });
    await driver.run('stop', box, context());
    expect(await driver.run('recover', box, context())).toEqual({ state: 'stopped' });
    const [before] = await engine.containers(box.id);
    await engine.docker.getContainer(before!.Id).remove({ force: true, v: true });
    expect(await driver.run('recover', box, context())).toEqual({ state: 'stopped' });
    const [after, ...more] = await engine.containers(box.id);
    expect(more).toEqual([]);
    expect(after).toMatchObject({ State: 'created', Labels: { [LABEL.computer]: box.id } });
    expect(after?.Id).not.toBe(before?.Id);
    await driver.run('delete', box, context());
  });

  test('recover: a container of the same name without our labels is refused, never touched', async () => {
    const box = computer();
    const stranger = await engine.docker.createContainer({
      name: containerName(engine.instance, box.id),
      Image: TEST_IMAGE,
      Labels: { [LABEL.managed]: 'true', [LABEL.instance]: engine.instance },
      HostConfig: { NetworkMode: 'none' },
    });
    const error = await driver.run('recover', box, context()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'internal' });
    expect((await stranger.inspect()).State.Status).toBe('created');
    await stranger.remove({ force: true });
  });

  test('exec: exit code, demuxed stdout and stderr, stdin, caps with truncated flags, timeout kills', async () => {
    const box = computer();
    await driver.run('start', box, context());
    const plain = await driver.exec(box, execRequest(['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']));
    expect({ ...plain, stdout: text(plain.stdout), stderr: text(plain.stderr) }).toEqual({
      exitCode: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      stdoutTruncated: false,
      stderrTruncated: false,
      timedOut: false,
    });
    const piped = await driver.exec(
      box,
      execRequest(['/bin/cat'], { stdin: new TextEncoder().encode('hello') }),
    );
    expect([piped.exitCode, text(piped.stdout)]).toEqual([0, 'hello']);
    const big = await driver.exec(
      box,
      execRequest(['/bin/sh', '-c', 'yes | head -c 5000; yes e | head -c 10 >&2'], { maxOutputBytes: 100 }),
    );
    expect([big.stdout.length, big.stdoutTruncated, text(big.stderr), big.stderrTruncated]).toEqual([
      100,
      true,
      'e\ne\ne\ne\ne\n',
      false,
    ]);
    const started = Date.now();
    const slow = await driver.exec(box, execRequest(['/bin/sleep', '30'], { timeoutMs: 300 }));
    expect(slow).toMatchObject({ timedOut: true });
    expect(slow.exitCode).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The command is gone from the computer, not merely detached from.
    const ps = await driver.exec(box, execRequest(['/bin/ps', '-o', 'args']));
    expect(text(ps.stdout)).not.toContain('sleep 30');
    // So are the processes it started, and the exec left nothing in /tmp.
    const tree = await driver.exec(
      box,
      execRequest(['/bin/sh', '-c', 'sleep 31 & sleep 32'], { timeoutMs: 300 }),
    );
    expect(tree).toMatchObject({ timedOut: true });
    const after = await driver.exec(box, execRequest(['/bin/sh', '-c', 'ps -o args; ls -A /tmp']));
    expect(text(after.stdout)).not.toMatch(/sleep 3[12]/);
    expect(text(after.stdout)).not.toContain('svc');
    const missing = await driver.exec(box, execRequest(['/no/such/program']));
    expect(missing.exitCode).toBe(127);
    await driver.run('stop', box, context());
    await expect(driver.exec(box, execRequest(['/bin/true']))).rejects.toMatchObject({
      code: 'invalid_state',
    });
    await driver.run('delete', box, context());
  });

  test('exec: onOutput gets each stream’s bytes as they are written, after the cap: joined, exactly the result’s', async () => {
    const box = computer();
    await driver.run('start', box, context());
    const heard: { stream: string; bytes: Buffer; atMs: number }[] = [];
    const started = performance.now();
    const result = await driver.exec(
      box,
      execRequest(['/bin/sh', '-c', 'echo first; sleep 1; echo oops >&2; yes | head -c 3000'], {
        maxOutputBytes: 1000,
        onOutput: (stream, bytes) =>
          heard.push({ stream, bytes: Buffer.from(bytes), atMs: performance.now() - started }),
      }),
    );
    const of = (stream: string) =>
      Buffer.concat(heard.filter((h) => h.stream === stream).map((h) => h.bytes));
    expect(of('stdout')).toEqual(Buffer.from(result.stdout));
    expect(of('stderr')).toEqual(Buffer.from(result.stderr));
    expect([result.stdout.length, result.stdoutTruncated, text(result.stderr)]).toEqual([
      1000,
      true,
      'oops\n',
    ]);
    // The first line arrived before the command went on (a second later), not at its end.
    const first = heard.find((h) => h.stream === 'stdout');
    expect(first?.bytes.toString()).toBe('first\n');
    expect(heard.at(-1)?.atMs ?? 0).toBeGreaterThan((first?.atMs ?? 0) + 500);
    await driver.run('delete', box, context());
  });

  test('exec agent: once it is up, commands run through it with the results the Engine exec gives', async () => {
    const box = computer();
    await driver.run('start', box, context());
    const engineOnly = new DockerDriver({
      docker: engine.docker,
      catalog,
      instance: engine.instance,
      hostCpus: 1,
      execAgent: false,
    });
    // The command's parent: the agent's shell under an agent, nothing in the container under the Engine.
    const parent = ['/bin/sh', '-c', 'tr "\\0" " " < /proc/$PPID/cmdline 2>/dev/null; true'];
    let viaAgent = false;
    for (let attempt = 0; attempt < 100 && !viaAgent; attempt++) {
      viaAgent = text((await driver.exec(box, execRequest(parent))).stdout).includes('exec-agent');
      if (!viaAgent) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(viaAgent).toBe(true);
    expect(text((await engineOnly.exec(box, execRequest(parent))).stdout)).not.toContain('exec-agent');
    const cases: [string[], Partial<ExecRequest>?][] = [
      [['echo', "it's", 'two\nlines', '$HOME', '`id`', '"q"', '\\', ' ', '']],
      [['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']],
      [['/no/such/program']],
      [['/bin/sh', '-c', 'printf "no newline"; printf "\\036 not ours" >&2']],
      [['/bin/sh', '-c', 'yes | head -c 5000; yes e | head -c 10 >&2'], { maxOutputBytes: 100 }],
      // A background process holding stdout: the command ends when it closes it, as with the Engine.
      [['/bin/sh', '-c', 'sleep 0.3 && echo late & echo now']],
      [['/bin/sh', '-c', 'env | grep -v ^SVC_EXEC= | sort; pwd; id; cat; kill -9 $$']],
    ];
    for (const [argv, overrides] of cases) {
      const viaEngine = await engineOnly.exec(box, execRequest(argv, overrides));
      const viaDriver = await driver.exec(box, execRequest(argv, overrides));
      expect({ ...viaDriver, stdout: text(viaDriver.stdout), stderr: text(viaDriver.stderr) }).toEqual({
        ...viaEngine,
        stdout: text(viaEngine.stdout),
        stderr: text(viaEngine.stderr),
      });
    }
    expect(text((await driver.exec(box, execRequest(parent))).stdout)).toContain('exec-agent');
    // Output reaches onOutput as it is written, not at the command's end.
    const heard: { bytes: string; atMs: number }[] = [];
    const began = performance.now();
    const streamed = await driver.exec(
      box,
      execRequest(['/bin/sh', '-c', 'echo first; sleep 1; echo second'], {
        onOutput: (_stream, bytes) => heard.push({ bytes: text(bytes), atMs: performance.now() - began }),
      }),
    );
    expect(heard.map((h) => h.bytes).join('')).toBe(text(streamed.stdout));
    expect(heard[0]?.bytes).toBe('first\n');
    expect(heard.at(-1)?.atMs ?? 0).toBeGreaterThan((heard[0]?.atMs ?? 0) + 500);
    // A timeout kills the command and what it started, then the agent takes the next one.
    const started = Date.now();
    const slow = await driver.exec(
      box,
      execRequest(['/bin/sh', '-c', 'sleep 41 & sleep 42'], { timeoutMs: 300 }),
    );
    expect(slow).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(Date.now() - started).toBeLessThan(10_000);
    const ps = await driver.exec(box, execRequest(['/bin/ps', '-o', 'args']));
    expect(text(ps.stdout)).not.toMatch(/sleep 4[12]/);
    expect(text((await driver.exec(box, execRequest(parent))).stdout)).toContain('exec-agent');
    // stdin goes through the Engine's exec.
    const piped = await driver.exec(
      box,
      execRequest(['/bin/cat'], { stdin: new TextEncoder().encode('hi') }),
    );
    expect([piped.exitCode, text(piped.stdout)]).toEqual([0, 'hi']);
    // The agent ends with its container: a stopped computer runs nothing.
    await driver.run('stop', box, context());
    await expect(driver.exec(box, execRequest(['/bin/true']))).rejects.toMatchObject({
      code: 'invalid_state',
    });
    await driver.run('delete', box, context());
  });

  test('exec: a container replaced by a stranger under the same name runs nothing', async () => {
    const box = computer();
    await driver.run('start', box, context());
    expect((await driver.exec(box, execRequest(['/bin/true']))).exitCode).toBe(0); // its id is now known
    await driver.run('delete', box, context());
    const stranger = await engine.docker.createContainer({
      name: containerName(engine.instance, box.id),
      Image: TEST_IMAGE,
      Cmd: ['/bin/sleep', '600'],
      Labels: { [LABEL.managed]: 'true', [LABEL.instance]: engine.instance },
      HostConfig: { NetworkMode: 'none' },
    });
    await stranger.start();
    await expect(driver.exec(box, execRequest(['/bin/touch', '/tmp/ran']))).rejects.toMatchObject({
      code: 'internal',
    });
    const probe = await stranger.exec({ Cmd: ['/bin/ls', '/tmp/ran'] });
    await probe.start({ Detach: true });
    let probed = await probe.inspect();
    while (probed.Running) probed = await probe.inspect();
    expect(probed.ExitCode).toBe(1); // no such file: /tmp/ran was never made
    await stranger.remove({ force: true });
  });
  test('imageAvailable: yes when the Engine has the reference; no when it lacks it, has none, or does not answer', async () => {
    expect(await driver.imageAvailable('busybox')).toBe(true);
    expect(await driver.imageAvailable('gone')).toBe(false);
    expect(await driver.imageAvailable('none')).toBe(false);
    expect(await driver.imageAvailable('not-in-the-catalogue')).toBe(false);
    const nowhere = new DockerDriver({
      docker: new Docker({ socketPath: `/tmp/no-engine-${newId()}.sock` }),
      catalog,
      instance: engine.instance,
    });
    expect(await nowhere.imageAvailable('busybox')).toBe(false);
  });
});
