// `svc computers shell` run as built (dist/main.js) against a fake of the terminal endpoints
// (@svc/tools/fake-terminals, a simulated line discipline): piped stdin typed in and the remote exit
// code as svc's own; on a terminal (util-linux `script` gives svc a pseudo-terminal) raw mode, a
// resize on SIGWINCH, the `Ctrl-] d` detach, `--attach` replaying the kept output, and the local
// terminal's mode restored on every way out.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeTerminals, startFakeTerminals } from '@svc/tools/fake-terminals';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/mcp-client.js';

if (!existsSync(BIN) && process.env.CI) throw new Error(`cannot run under CI: ${BIN} is not built`);
const hasScript = existsSync('/usr/bin/script');

let fake: FakeTerminals | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A step of a run: wait until `until` holds of stdout (10 s at most), then `act`, then write `write`. */
interface Step {
  until?: (stdout: string) => boolean;
  act?: () => Promise<void> | void;
  write?: string;
}

/** Runs `file args` with `SVC_BASE_URL` at the fake, stepping through `steps` on its stdin. */
function runWith(file: string, args: string[], steps: Step[]): Promise<Run> {
  const child = spawn(file, args, {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SVC_BASE_URL: fake?.baseUrl,
      SVC_ACCESS_TOKEN: 'token',
      SVC_CONFIG_DIR: '/nonexistent-svc-config',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('latin1');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ended = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  // A run that hangs is ended, so the assertions show what it printed.
  const timer = setTimeout(() => child.kill('SIGKILL'), 12_000);
  ended.then(() => clearTimeout(timer));
  (async () => {
    for (const step of steps) {
      const deadline = Date.now() + 10_000;
      while (step.until && !step.until(stdout) && Date.now() < deadline) await sleep(20);
      await step.act?.();
      if (step.write !== undefined) child.stdin.write(step.write);
    }
    // `script` ends its session when its stdin ends: keep it open until `stty -a` after svc printed.
    const deadline = Date.now() + 10_000;
    while (file === 'script' && !/rprnt/.test(stdout) && Date.now() < deadline) await sleep(20);
    child.stdin.end();
  })();
  return ended;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const svc = (args: string[], stdin: string) =>
  runWith(process.execPath, [BIN, 'computers', 'shell', 'dev', 'box', ...args], [{ write: stdin }]);

/**
 * svc on a pseudo-terminal of 100x30 made by `script`; once `resizeFlag` exists, a background job
 * resizes that terminal to 120x40 (the kernel sends svc SIGWINCH); after svc, `stty -a` shows the mode
 * it left.
 */
const onTerminal = (args: string[], resizeFlag: string, steps: Step[]) =>
  runWith(
    'script',
    [
      '-qfec',
      `stty cols 100 rows 30; (while [ ! -e ${resizeFlag} ]; do sleep 0.05; done; stty cols 120 rows 40 < /dev/tty) & watcher=$!; "${process.execPath}" "${BIN}" computers shell dev box ${args.join(' ')}; echo "svc-status=$?"; kill $watcher 2>/dev/null; stty -a`,
      '/dev/null',
    ],
    steps,
  );

describe.skipIf(!existsSync(BIN))('svc computers shell, piped', () => {
  it('types stdin into the terminal, prints what it writes, and exits with its exit code', async () => {
    fake = await startFakeTerminals();
    const run = await svc([], 'echo hi\nexit 3\n');
    expect(run.stdout).toBe('$ echo hi\r\nhi\r\n$ exit 3\r\n');
    expect(run.code).toBe(3);
    const [id] = fake.ids();
    expect(fake.terminal(id as string)).toMatchObject({ cols: 80, rows: 24, exit_code: 3 });
  });

  it('sends the command after --, and Ctrl-D when stdin ends', async () => {
    fake = await startFakeTerminals();
    const run = await svc(['--cols', '90', '--', 'python3', '-q'], 'echo bye\n');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('$ echo bye\r\nbye\r\n$ ');
    const open = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/terminals'));
    expect(JSON.parse(open?.body.toString() ?? '')).toEqual({
      cols: 90,
      rows: 24,
      command: ['python3', '-q'],
    });
    const typed = fake.requests.filter((r) => r.path.endsWith('/input')).map((r) => r.body.toString());
    expect(typed.join('')).toBe('echo bye\n\x04');
  });

  it('says how many bytes it lost when it fell further behind than the service keeps, and goes on', async () => {
    fake = await startFakeTerminals({
      plan: ({ connection }) => (connection === 0 ? { expireAfter: 1 } : undefined),
    });
    const run = await runWith(
      process.execPath,
      [BIN, 'computers', 'shell', 'dev', 'box'],
      [
        { until: () => fake?.ids().length === 1 && fake.requests.some((r) => r.path.endsWith('/output')) },
        { act: () => fake?.emit(fake.ids()[0] as string, new TextEncoder().encode('lost\r\n')) },
        { act: async () => void (await sleep(200)) },
        { write: 'echo hi\nexit 3\n' },
      ],
    );
    expect(run.stderr).toContain(
      '[svc: 6 bytes of output lost: this shell fell further behind than the service keeps]',
    );
    expect(run.stdout).toBe('$ echo hi\r\nhi\r\n$ exit 3\r\n');
    expect(run.code).toBe(3);
  });

  it('writes the output bytes exact, UTF-8 or not', async () => {
    fake = await startFakeTerminals();
    const bytes = Uint8Array.of(0xff, 0x00, 0xfe, 0x1b, 0x5b, 0x6d, 0xe2, 0x82, 0xac);
    const run = await runWith(
      process.execPath,
      [BIN, 'computers', 'shell', 'dev', 'box'],
      [
        { until: () => fake?.ids().length === 1, act: () => fake?.emit(fake.ids()[0] as string, bytes) },
        { write: 'exit 0\n' },
      ],
    );
    expect(run.code).toBe(0);
    expect([...Buffer.from(run.stdout, 'latin1')]).toEqual([
      ...Buffer.from('$ '),
      ...bytes,
      ...Buffer.from('exit 0\r\n'),
    ]);
  });

  it('an unknown terminal to attach to is not_found (exit 4)', async () => {
    fake = await startFakeTerminals();
    const run = await svc(['--attach', '01nope'], '');
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('not_found');
  });
});

describe.skipIf(!existsSync(BIN) || !hasScript)('svc computers shell, on a terminal', () => {
  it('raw mode, a resize on SIGWINCH, Ctrl-] d detaches; --attach replays and ends with the exit code', async () => {
    fake = await startFakeTerminals();
    const dir = await mkdtemp(join(tmpdir(), 'svc-shell-'));
    const flag = join(dir, 'resize');
    const resized = () => fake?.requests.some((r) => r.method === 'PATCH') === true;
    const first = await onTerminal([], flag, [
      { until: (out) => out.includes('$ '), write: 'echo hi\r' },
      { until: (out) => out.includes('hi\r\n'), act: () => writeFile(flag, '') },
      { until: resized, write: '\x1dd' },
    ]);
    await rm(dir, { recursive: true, force: true });
    const [id] = fake.ids();
    // Raw mode: the local terminal echoed nothing itself; what shows is the remote echo and answer.
    expect(first.stdout).toContain('$ echo hi\r');
    expect(first.stdout.split('echo hi')).toHaveLength(2); // once: no local echo on top of the remote one
    expect(first.stdout).toContain(`Detached from terminal ${id}`);
    expect(first.stdout).toContain(`svc computers shell dev box --attach ${id}`);
    expect(first.stdout).toContain('svc-status=0');
    // Opened at the local size, resized with it; still open after the detach.
    const open = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/terminals'));
    expect(JSON.parse(open?.body.toString() ?? '')).toEqual({ cols: 100, rows: 30 });
    expect(fake.terminal(id as string)).toMatchObject({ state: 'open', cols: 120, rows: 40 });
    // The mode is restored: canonical input and echo, as before svc.
    expect(first.stdout).toMatch(/(^|[ ;])icanon /m);
    expect(first.stdout).toMatch(/(^|[ ;])echo /m);

    const second = await onTerminal([`--attach ${id}`], '/nonexistent', [
      { until: (out) => out.split('hi\r\n$ ').length > 1, write: 'exit 3\r' },
    ]);
    expect(second.stdout).toContain('$ echo hi\r\nhi\r\n$ exit 3'); // the kept output, replayed
    expect(second.stdout).toContain('svc-status=3');
    expect(second.stdout).toMatch(/(^|[ ;])icanon /m);
    expect(fake.terminal(id as string)).toMatchObject({ state: 'closed', exit_code: 3 });
  });

  it('puts the mode back when svc is ended by SIGTERM, and when the terminal ends without an exit code', async () => {
    fake = await startFakeTerminals();
    const dir = await mkdtemp(join(tmpdir(), 'svc-shell-'));
    const flag = join(dir, 'term');
    // svc in the background with the terminal as stdin (no job control: one process group), ended by
    // SIGTERM from another job once the flag exists.
    const killed = await runWith(
      'script',
      [
        '-qfec',
        `stty cols 100 rows 30; "${process.execPath}" "${BIN}" computers shell dev box < /dev/tty & pid=$!; (while [ ! -e ${flag} ]; do sleep 0.05; done; kill -TERM $pid) & wait $pid; echo "svc-status=$?"; stty -a`,
        '/dev/null',
      ],
      [{ until: (out) => out.includes('$ '), act: () => writeFile(flag, '') }],
    );
    await rm(dir, { recursive: true, force: true });
    expect(killed.stdout).toContain('svc-status=143');
    expect(killed.stdout).toMatch(/(^|[ ;])icanon /m);
    expect(killed.stdout).toMatch(/(^|[ ;])echo /m);
    expect(killed.stdout).toMatch(/(^|[ ;])opost /m);

    const ended = await onTerminal([], '/nonexistent', [
      {
        until: (out) => out.includes('$ '),
        act: () => fake?.end(fake.ids().at(-1) as string, undefined, 'server_stopped'),
      },
    ]);
    expect(ended.stdout).toContain('The terminal ended (server_stopped) without an exit code.');
    expect(ended.stdout).toContain('svc-status=1');
    expect(ended.stdout).toMatch(/(^|[ ;])icanon /m);
    expect(ended.stdout).toMatch(/(^|[ ;])opost /m);
  });
});
