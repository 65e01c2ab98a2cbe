// The stream commands against the real server app (in process, port 0, the simulated driver), with
// the bootstrap key file: a workspace's events tailed as JSON lines while a computer is created, and a
// command run with --follow.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';
import { type RunningService, startApp } from '../support/server.js';

describe('stream commands against the real server', () => {
  let service: RunningService;
  let env: Record<string, string>;
  let workspace: string;

  /** `svc` in process, its output readable while it runs. */
  function svc(argv: string[], io: Partial<CliIo> = {}) {
    let stdout = '';
    let stderr = '';
    const done = run(argv, {
      env,
      isTTY: false,
      ...io,
      stdout: { write: (chunk: string | Uint8Array) => (stdout += Buffer.from(chunk).toString()) },
      stderr: { write: (chunk: string | Uint8Array) => (stderr += Buffer.from(chunk).toString()) },
    });
    return { done, stdout: () => stdout, stderr: () => stderr };
  }
  const json = async (argv: string[]) => {
    const call = svc(['-o', 'json', ...argv]);
    expect(await call.done, call.stderr()).toBe(0);
    return JSON.parse(call.stdout());
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-streams-'));
    service = await startApp(dir);
    env = {
      SVC_BASE_URL: service.baseUrl,
      SVC_KEY_FILE: service.keyFilePath,
      SVC_CONFIG_DIR: join(dir, 'config'),
    };
    workspace = (await json(['workspaces', 'list'])).workspaces[0].name;
  });
  const stops: AbortController[] = [];
  afterAll(async () => {
    for (const stop of stops) stop.abort();
    await service?.close();
  });

  test('svc workspaces events -o json tails a computer created and started; run --follow prints its output', async () => {
    const interrupt = new AbortController();
    stops.push(interrupt);
    const tail = svc(['workspaces', 'events', workspace, '-o', 'json'], { signal: interrupt.signal });
    // Without a cursor the stream starts at the next change: give it time to open first.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [size] = (await json(['sizes', 'list'])).sizes;
    const [image] = (await json(['images', 'list'])).images;
    const created = svc([
      'computers',
      'create',
      workspace,
      '--name',
      'streamer',
      '--size',
      size.name ?? size.id,
      '--image',
      image.name ?? image.id,
      '--wait',
    ]);
    expect(await created.done, created.stderr()).toBe(0);
    const lines = () =>
      tail
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map(
          (line) => JSON.parse(line) as { event: string; id: string; data: { computer?: { state: string } } },
        );
    await expect
      .poll(
        () => lines().some((e) => e.event === 'computer.updated' && e.data.computer?.state === 'running'),
        {
          timeout: 15_000,
        },
      )
      .toBe(true);
    expect(lines()[0]?.event).toBe('computer.created');
    const ids = lines().map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    const hello = svc([
      'computers',
      'run',
      workspace,
      'streamer',
      '--follow',
      '--',
      'echo',
      'hello',
      'stream',
    ]);
    expect(await hello.done, hello.stderr()).toBe(0);
    expect(hello.stdout()).toBe('hello stream\n');
    const failing = svc(['computers', 'run', workspace, 'streamer', '--follow', '--', 'false']);
    expect(await failing.done).toBe(1);

    // The command's operations are events too; then Ctrl-C ends the tail with 130 and the cursor.
    await expect
      .poll(() => lines().some((e) => e.event === 'operation.completed'), { timeout: 15_000 })
      .toBe(true);
    interrupt.abort();
    expect(await tail.done).toBe(130);
    expect(tail.stderr()).toContain(
      `svc workspaces events ${workspace} --last-event-id ${lines().at(-1)?.id}`,
    );
  });

  test('svc operations output replays a finished command’s output, and 404 for an unknown operation', async () => {
    const started = await json(['computers', 'run', workspace, 'streamer', '--wait', '--', 'echo', 'again']);
    const id = started.operations[0].id;
    const replay = svc(['operations', 'output', id]);
    expect(await replay.done, replay.stderr()).toBe(0);
    expect(replay.stdout()).toBe('again\n');
    const events = svc(['operations', 'output', id, '-o', 'json']);
    expect(await events.done).toBe(0);
    const names = events
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).event);
    expect(names.at(-1)).toBe('exit');
    expect(new Set(names.slice(0, -1))).toEqual(new Set(['output']));
    const missing = svc(['operations', 'output', '01m6e5gr5mpj3ht9gw2s64n9fzz']);
    expect(await missing.done).toBe(4);
  });
});
