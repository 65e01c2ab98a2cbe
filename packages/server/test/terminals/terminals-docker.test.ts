// Terminals on the Docker driver (design §17): a real PTY in a busybox container — `sh` answers
// `echo hi`, `stty size` sees a resize, `exit 3` ends the terminal with exit code 3, a hang-up ends
// the shell (SIGHUP, 129). Skipped where no Docker Engine answers or the test image is missing.
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DockerTerminals } from '../../src/computers/terminals/docker.js';
import type { Pty } from '../../src/computers/terminals/driver.js';
import { type DockerProbe, probeDocker, TEST_IMAGE } from '../support/docker-probe.js';

const probe: DockerProbe = await probeDocker();

describe.skipIf(!probe.usable)(`terminals on the Docker driver (${probe.reason || 'busybox'})`, () => {
  const docker = new Docker({ socketPath: probe.socketPath });
  let container: Docker.Container;
  const computer = {
    id: 'c',
    workspace_id: 'w',
    name: 'pty-test',
    size: 'small',
    image: 'busybox',
    labels: {},
  };
  let terminals: DockerTerminals;
  beforeAll(async () => {
    container = await docker.createContainer({
      Image: TEST_IMAGE,
      Cmd: ['sleep', '600'],
      Labels: { 'svc.test': 'terminals' },
      HostConfig: { AutoRemove: true },
    });
    await container.start();
    terminals = new DockerTerminals(docker, async () => container.inspect());
  });
  afterAll(async () => {
    await container?.kill().catch(() => {});
  });

  /** A shell on a PTY, with what it wrote so far and its exit. */
  async function shell(cols = 80, rows = 24) {
    const signal = AbortSignal.timeout(10_000);
    const pty: Pty = await terminals.open(computer, {
      command: undefined,
      cwd: undefined,
      env: { TERM: 'xterm' },
      cols,
      rows,
      signal,
    });
    let out = '';
    pty.onData((bytes) => {
      out += Buffer.from(bytes).toString('latin1');
    });
    const exited = new Promise<number | undefined>((resolve) => pty.onExit(resolve));
    const until = async (what: string) => {
      const deadline = Date.now() + 5000;
      while (!out.includes(what)) {
        if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(what)} in ${JSON.stringify(out)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    return { pty, exited, until, out: () => out };
  }

  test('`echo hi` answers hi; `stty size` after a resize; `exit 3` is exit code 3', async () => {
    const { pty, exited, until } = await shell(80, 24);
    expect(pty.command).toEqual(['/bin/sh', '-l']);
    pty.write(new TextEncoder().encode('echo hi\r'));
    await until('hi\r\n');
    pty.write(new TextEncoder().encode('stty size\r'));
    await until('24 80');
    pty.resize(132, 40);
    await new Promise((resolve) => setTimeout(resolve, 200));
    pty.write(new TextEncoder().encode('stty size\r'));
    await until('40 132');
    pty.write(new TextEncoder().encode('exit 3\r'));
    expect(await exited).toBe(3);
  });

  test('pause stops taking what the program writes (the program blocks); resume takes the rest, all of it', async () => {
    const { pty, until, out, exited } = await shell();
    await until('$ ');
    // 1,000,000 bytes of `y\n` (each \n written as \r\n by the PTY), then a marker.
    pty.write(new TextEncoder().encode('yes | head -c 1000000; echo E""ND; exit 0\r'));
    await until('y\r\n');
    pty.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = out().length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Paused: at most what was already on its way (the socket's buffers) came meanwhile, and no end.
    expect(out().length - held).toBeLessThan(512 * 1024);
    expect(out()).not.toContain('END');
    pty.resume();
    expect(await exited).toBe(0);
    expect(out().split('y\r\n').length - 1).toBe(500_000);
    expect(out()).toContain('END');
  });

  test('a hang-up ends the shell with SIGHUP (129)', async () => {
    const { pty, exited, until } = await shell();
    pty.write(new TextEncoder().encode('echo ready\r'));
    await until('ready\r\n');
    const started = Date.now();
    pty.hangup();
    expect(await exited).toBe(129);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  test('a keystroke comes back as its echo (round trips through the Engine, measured)', async () => {
    const { pty, until, out } = await shell();
    pty.write(new TextEncoder().encode('echo ready\r'));
    await until('ready\r\n');
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const before = out().length;
      const started = performance.now();
      pty.write(Uint8Array.of(0x61));
      while (out().length === before) await new Promise((resolve) => setImmediate(resolve));
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    console.info(
      `docker PTY keystroke echo: p50 ${times[25]?.toFixed(2)} ms, p95 ${times[47]?.toFixed(2)} ms`,
    );
    expect(times[25]).toBeLessThan(30);
    pty.hangup();
  });
});
