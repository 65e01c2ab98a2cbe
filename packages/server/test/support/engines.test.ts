import { existsSync, readFileSync } from 'node:fs';
import Docker from 'dockerode';
import { expect, test } from 'vitest';
import { TEST_IMAGE } from './docker-probe.js';
import { describeEngines, startEngines, type TestEngine } from './engines.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A client that gives up quickly, so a paused Engine fails fast. */
const quick = (engine: TestEngine) => new Docker({ socketPath: engine.socketPath, timeout: 500 });

const sleeper = (engine: TestEngine, name: string) =>
  engine.docker.createContainer({
    name,
    Image: TEST_IMAGE,
    Cmd: ['sleep', '600'],
    HostConfig: { NetworkMode: 'none' },
  });

describeEngines('extra Docker Engines', 3, (engines) => {
  test('three Engines, each with the test image and its own ID', async () => {
    const list = engines();
    expect(list.map((engine) => engine.name)).toEqual(['engine-1', 'engine-2', 'engine-3']);
    const ids = new Set<string>();
    for (const engine of list) {
      expect(engine.socketPath.length).toBeLessThan(100);
      await engine.docker.getImage(TEST_IMAGE).inspect();
      ids.add((await engine.docker.info()).ID);
    }
    expect(ids.size).toBe(3);
  });

  test('a container in one Engine is invisible to the others and to the main Engine', async () => {
    const [one, two] = engines() as [TestEngine, TestEngine];
    const container = await sleeper(one, 'isolated');
    expect((await one.docker.listContainers({ all: true })).map((c) => c.Id)).toContain(container.id);
    expect((await two.docker.listContainers({ all: true })).map((c) => c.Id)).not.toContain(container.id);
    await expect(two.docker.getContainer(container.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(new Docker().getContainer(container.id).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
  });

  test('pause stops the Engine answering, its container keeps running; resume brings it back', async () => {
    const engine = engines()[1] as TestEngine;
    const container = await sleeper(engine, 'keeps-running');
    await container.start();
    const processId = (await container.inspect()).State.Pid;
    expect(processId).toBeGreaterThan(0);
    await engine.pause();
    try {
      const asked = Date.now();
      // dockerode's timeout destroys the request: "socket hang up".
      await expect(quick(engine).ping()).rejects.toThrow();
      expect(Date.now() - asked).toBeLessThan(3000);
      expect(alive(processId)).toBe(true);
    } finally {
      engine.resume();
    }
    expect(String(await quick(engine).ping())).toBe('OK');
    expect((await container.inspect()).State.Running).toBe(true);
  });

  test('stop and restart keep the data', async () => {
    const engine = engines()[2] as TestEngine;
    const container = await sleeper(engine, 'survives');
    const before = engine.pid;
    await engine.stop();
    expect(engine.pid).toBeUndefined();
    expect(before !== undefined && alive(before)).toBe(false);
    await expect(quick(engine).ping()).rejects.toThrow();
    await engine.restart();
    expect(engine.pid).not.toBe(before);
    expect((await container.inspect()).Name).toBe('/survives');
    await engine.docker.getImage(TEST_IMAGE).inspect();
  });

  test('close leaves no process, no mount and no directory, even with a container running', async () => {
    const started = await startEngines(2);
    const [one] = started.engines as [TestEngine];
    const container = await sleeper(one, 'running-at-close');
    await container.start();
    const pids = [
      ...started.engines.map((engine) => engine.pid as number),
      (await container.inspect()).State.Pid,
    ];
    expect(pids.every(alive)).toBe(true);
    await started.engines[1]?.pause();
    await started.close();
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(started.dir)).toBe(false);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(started.dir);
  });
});
