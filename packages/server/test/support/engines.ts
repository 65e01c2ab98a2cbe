/**
 * Several real Docker Engines side by side, for the fleet tests (computers placed across many Engines).
 *
 * `startEngines(n)` starts `n` extra `dockerd` processes next to the machine's main Engine, each with its
 * own data root, exec root, pid file, trust key (so each has its own Engine ID) and socket, all under one
 * fresh 0700 directory, with the main Engine's flags (overlay2, no bridge, no iptables, no IP
 * forwarding). Each `dockerd` runs its own managed `containerd` under its exec root; none is shared. The
 * test image(s) are streamed from the main Engine into each (`GET /images/{name}/get` piped into
 * `POST /images/load`, no file). Starting three with the busybox image takes about 4–5 s on two cores
 * (one: 1.6 s); `stop()` of an Engine with a running container takes about 12 s, because dockerd gives
 * each container its stop timeout (10 s; busybox `sleep` as PID 1 ignores SIGTERM).
 *
 * Every process is tracked by its pid and ended by that pid; nothing is ever killed or unmounted by name.
 * `close()` removes every container of these Engines (they are the tests' only), stops each `dockerd`,
 * unmounts whatever is still mounted under the directory (by path) and deletes it.
 *
 * Needs root, the `dockerd` binary and the main Engine with the test image; `describeEngines` skips
 * with the reason otherwise, unless `CI=true`, where it fails.
 *
 * @example
 * describeEngines('placement', 3, (engines) => {
 *   test('each Engine answers', async () => {
 *     for (const engine of engines()) expect(await engine.docker.ping()).toBeTruthy();
 *   });
 * });
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { TEST_IMAGE } from './docker-probe.js';

/** One extra Engine. `pid` is the current `dockerd`'s (it changes on `restart()`). */
export interface TestEngine {
  /** `engine-1`, `engine-2`, … */
  readonly name: string;
  readonly socketPath: string;
  readonly docker: Docker;
  /** The running `dockerd`'s pid; `undefined` after `stop()`. */
  readonly pid: number | undefined;
  /**
   * SIGSTOP to `dockerd`, resolved once all its threads are stopped: the Engine stops answering (a
   * request hangs until its client times out), its containers keep running under containerd.
   */
  pause(): Promise<void>;
  /** SIGCONT: the Engine answers again. */
  resume(): void;
  /** SIGTERM and wait for `dockerd` to exit (SIGKILL after `stopTimeoutMs`). */
  stop(): Promise<void>;
  /** Starts `dockerd` again on the same roots and socket and waits for `/_ping`. */
  restart(): Promise<void>;
}

/** What `startEngines` returns. */
export interface Engines {
  readonly engines: TestEngine[];
  /** The fresh directory holding every root and socket. */
  readonly dir: string;
  /** Removes every container, stops every `dockerd`, unmounts and deletes `dir`. Safe to call twice. */
  close(): Promise<void>;
}

/** Options of `startEngines`. */
export interface EnginesOptions {
  /** Images copied from the main Engine into each; default `[TEST_IMAGE]`. */
  images?: string[];
  /** The main Engine's socket; default `SVC_DOCKER_SOCKET` or `/var/run/docker.sock`. */
  mainSocketPath?: string;
  /** How long each `dockerd` may take to answer `/_ping`; default 30 s. */
  readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL; default 20 s. */
  stopTimeoutMs?: number;
  /**
   * More `dockerd` flags for an engine, given its directory (e.g. a TLS listener on 127.0.0.1 with
   * certificates written there first); default none.
   */
  extraArgs?: (engine: { name: string; root: string }) => string[];
}

const OVERLAYFS_MAGIC = 0x794c7630;
const TMPFS_MAGIC = 0x01021994;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` is a live process (a zombie of ours counts as gone once reaped by Node). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether every thread of `pid` is stopped (state `T`, after SIGSTOP). */
function stopped(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).every((task) => {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      // The state follows the command name, which is in parentheses and may hold spaces.
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
    });
  } catch {
    return false;
  }
}

/** Where the roots go: the temp dir, unless its filesystem cannot carry overlay2 upper layers. */
function parentDir(): string {
  const tmp = tmpdir();
  const type = statfsSync(tmp).type;
  return type === OVERLAYFS_MAGIC || type === TMPFS_MAGIC ? '/var/lib' : tmp;
}

/** Why extra Engines cannot start here, or `''` when they can. */
export function enginesUnavailable(): string {
  if (process.platform !== 'linux') return 'extra Docker Engines need Linux';
  if (process.getuid?.() !== 0) return 'extra Docker Engines need root (dockerd runs as root)';
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .concat(['/usr/sbin', '/usr/bin'])
    .some((dir) => {
      try {
        accessSync(join(dir, 'dockerd'), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  if (!found) return 'no dockerd binary on PATH (apt-get install docker.io)';
  return '';
}

class Engine implements TestEngine {
  readonly docker: Docker;
  readonly socketPath: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;

  constructor(
    readonly name: string,
    private readonly root: string,
    private readonly options: Required<Omit<EnginesOptions, 'images' | 'mainSocketPath' | 'extraArgs'>>,
    private readonly extraArgs: string[] = [],
  ) {
    this.socketPath = join(root, 'sock');
    this.docker = new Docker({ socketPath: this.socketPath });
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  /** The managed containerd's pid, from the file dockerd writes under its exec root. */
  containerdPid(): number | undefined {
    try {
      const pid = Number(
        readFileSync(join(this.root, 'exec', 'containerd', 'containerd.pid'), 'utf8').trim(),
      );
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  async start(): Promise<void> {
    if (this.pid !== undefined) throw new Error(`${this.name}: dockerd is already running (pid ${this.pid})`);
    const r = this.root;
    const log = openSync(join(r, 'dockerd.log'), 'a');
    const child = spawn(
      'dockerd',
      [
        '--storage-driver',
        'overlay2',
        '--bridge',
        'none',
        '--iptables=false',
        '--ip-forward=false',
        '--data-root',
        join(r, 'data'),
        '--exec-root',
        join(r, 'exec'),
        '--pidfile',
        join(r, 'dockerd.pid'),
        // Not /etc/docker/daemon.json: only these flags, and its own trust key (below).
        '--config-file',
        join(r, 'daemon.json'),
        '-H',
        `unix://${this.socketPath}`,
        ...this.extraArgs,
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    this.child = child;
    this.paused = false;
    let failure: Error | undefined;
    this.exited = new Promise((resolve) => {
      child.once('error', (error) => {
        failure = error;
        resolve();
      });
      child.once('exit', () => resolve());
    });
    const ping = new Docker({ socketPath: this.socketPath, timeout: 1000 });
    const deadline = Date.now() + this.options.readyTimeoutMs;
    for (;;) {
      if (failure || child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `${this.name}: dockerd exited before answering${failure ? ` (${failure.message})` : ''}; ${this.logTail()}`,
        );
      if (
        await ping.ping().then(
          () => true,
          () => false,
        )
      )
        return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(
          `${this.name}: dockerd did not answer /_ping within ${this.options.readyTimeoutMs} ms; ${this.logTail()}`,
        );
      }
      await sleep(100);
    }
  }

  private logTail(): string {
    try {
      const lines = readFileSync(join(this.root, 'dockerd.log'), 'utf8').trimEnd().split('\n');
      return `last log lines:\n${lines.slice(-5).join('\n')}`;
    } catch {
      return 'no log';
    }
  }

  async pause(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) throw new Error(`${this.name}: dockerd is not running`);
    process.kill(pid, 'SIGSTOP');
    this.paused = true;
    // kill() returns before every thread has stopped: a request may still be served meanwhile.
    for (let i = 0; i < 200 && !stopped(pid); i++) await sleep(10);
    if (!stopped(pid))
      throw new Error(`${this.name}: dockerd (pid ${pid}) did not stop within 2 s of SIGSTOP`);
  }

  resume(): void {
    const pid = this.pid;
    if (pid === undefined) throw new Error(`${this.name}: dockerd is not running`);
    process.kill(pid, 'SIGCONT');
    this.paused = false;
  }

  async stop(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    // A stopped process does not act on SIGTERM until continued.
    if (this.paused) this.resume();
    const containerd = this.containerdPid();
    process.kill(pid, 'SIGTERM');
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      sleep(this.options.stopTimeoutMs).then(() => true),
    ]);
    if (timedOut && this.pid !== undefined) {
      process.kill(pid, 'SIGKILL');
      await this.exited;
    }
    // dockerd stops its containerd on a clean exit; after a SIGKILL it is orphaned: end it by its pid.
    if (containerd !== undefined && alive(containerd)) {
      process.kill(containerd, 'SIGTERM');
      for (let i = 0; i < 100 && alive(containerd); i++) await sleep(100);
      if (alive(containerd)) process.kill(containerd, 'SIGKILL');
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Removes every container of this Engine: the Engine is the tests' own. */
  async removeContainers(): Promise<void> {
    if (this.pid === undefined) return;
    if (this.paused) this.resume();
    const docker = new Docker({ socketPath: this.socketPath, timeout: 30_000 });
    const containers = await docker.listContainers({ all: true }).catch(() => []);
    await Promise.all(
      containers.map((c) =>
        docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .catch(() => {}),
      ),
    );
  }
}

/** Streams each image from the main Engine into `engine`, without a file in between. */
async function copyImages(main: Docker, engine: TestEngine, images: string[]): Promise<void> {
  for (const image of images) {
    const tar = await main.getImage(image).get();
    const response = await engine.docker.loadImage(tar);
    // The load answers with JSON lines; an error arrives as `{"errorDetail":…,"error":"…"}`.
    let body = '';
    for await (const chunk of response) body += String(chunk);
    const error = body
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { error?: string })
      .find((line) => line.error);
    if (error) throw new Error(`${engine.name}: loading ${image} failed: ${error.error}`);
  }
}

/** Every mount point under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  return (
    mountinfo
      .split('\n')
      .map((line) => line.split(' ')[4])
      .filter((point): point is string => point?.startsWith(`${dir}/`) === true)
      // mountinfo escapes spaces and the like as \040; our paths have none.
      .sort((a, b) => b.length - a.length)
  );
}

/**
 * Starts `count` extra Docker Engines in parallel and copies the test image(s) into each. On any
 * failure the ones already started are closed before the error is thrown.
 *
 * @example
 * const { engines, close } = await startEngines(3);
 * try {
 *   await engines[0].docker.createContainer({ Image: TEST_IMAGE, Cmd: ['true'] });
 * } finally {
 *   await close();
 * }
 */
export async function startEngines(count: number, options: EnginesOptions = {}): Promise<Engines> {
  const unavailable = enginesUnavailable();
  if (unavailable) throw new Error(unavailable);
  const images = options.images ?? [TEST_IMAGE];
  const main = new Docker({
    socketPath: options.mainSocketPath ?? (process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock'),
  });
  const timing = {
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
    stopTimeoutMs: options.stopTimeoutMs ?? 20_000,
  };
  // Short names: a unix socket path must stay under ~108 bytes.
  const dir = mkdtempSync(join(parentDir(), 'svce-'));
  const list: Engine[] = [];
  for (let i = 1; i <= count; i++) {
    const root = join(dir, String(i));
    mkdirSync(root, { mode: 0o700 });
    // Its own key, hence its own Engine ID: by default every dockerd uses /etc/docker/key.json.
    writeFileSync(
      join(root, 'daemon.json'),
      `${JSON.stringify({ 'deprecated-key-path': join(root, 'key.json') })}\n`,
    );
    const name = `engine-${i}`;
    list.push(new Engine(name, root, timing, options.extraArgs?.({ name, root }) ?? []));
  }
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.all(list.map((engine) => engine.removeContainers()));
    await Promise.all(list.map((engine) => engine.stop()));
    for (const point of mountsUnder(dir)) spawnSync('umount', [point], { stdio: 'ignore' });
    // A mount that is still busy: detach it, so the delete below cannot reach into it.
    for (const point of mountsUnder(dir)) spawnSync('umount', ['--lazy', point], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  const started = await Promise.allSettled(
    list.map(async (engine) => {
      await engine.start();
      await copyImages(main, engine, images);
    }),
  );
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  return { engines: list, dir, close };
}

const probe = inject('docker');
const ci = process.env.CI === 'true';

/**
 * `describe` with `count` extra Docker Engines, started in `beforeAll` and closed in `afterAll` (so a
 * failing test still cleans up). Skipped with the reason when they cannot start here (not root, no
 * `dockerd`, no main Engine or test image), unless `CI=true`: then it fails. `body` gets a getter: the
 * Engines exist only once `beforeAll` has run.
 *
 * @example
 * describeEngines('fleet', 2, (engines) => {
 *   test('two Engines', () => expect(engines()).toHaveLength(2));
 * });
 */
export function describeEngines(
  title: string,
  count: number,
  body: (engines: () => TestEngine[]) => void,
  options: EnginesOptions = {},
): void {
  const reason = enginesUnavailable() || (probe.usable ? '' : probe.reason);
  const skip = reason !== '' && !ci;
  if (skip) console.warn(`skipping "${title}": ${reason} (set CI=true to fail instead)`);
  (skip ? describe.skip : describe)(`${title} [engines]`, () => {
    if (reason) throw new Error(`${reason}; CI=true, so this fails instead of skipping`);
    let started: Engines | undefined;
    beforeAll(async () => {
      started = await startEngines(count, { mainSocketPath: probe.socketPath, ...options });
    }, 120_000);
    afterAll(async () => {
      await started?.close();
    }, 120_000);
    body(() => {
      if (!started) throw new Error('the Engines are not started yet: use them inside a test or hook');
      return started.engines;
    });
  });
}
