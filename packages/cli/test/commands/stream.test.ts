// The stream commands against a Server-Sent Events server written from the stream spec
// (@svc/tools/sse-server), over real sockets: `svc computers run … --follow` prints a command's output
// as it comes and exits with its code; `svc workspaces events` tails a workspace, as lines or JSON lines,
// until interrupted; both resume a dropped connection.
import { type SseServer, type SseServerOptions, startSseServer } from '@svc/tools/sse-server';
import { afterEach, describe, expect, test } from 'vitest';
import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';

const OP = '01m6e5gr5mpj3ht9gw2s64n9f74';
const OUTPUT = `/operations/${OP}/output`;
const EVENTS = '/workspaces/dev/events';
const RUN = 'POST /v1/workspaces/dev/computers/box/run';
const accepted = () => ({
  status: 202,
  body: {
    operations: [
      {
        id: OP,
        workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
        type: 'computer.exec',
        state: 'pending',
        progress: 0,
        target: { type: 'computer', id: '01m6cnenctgek8472bc9m7jfnzd' },
        created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
        created_at: '2026-11-09T18:00:00Z',
      },
    ],
  },
});
const chunk = (stream: string, data: string, encoding = 'utf-8') => ({ stream, offset: 0, encoding, data });
const exit = (code: number) => ({
  exit_code: code,
  stdout_truncated: false,
  stderr_truncated: false,
  timed_out: false,
  duration_ms: 20,
});
const computerEvent = (sequence: number, state: string) => ({
  id: `01m6e5gr5mpj3ht9gw2s64n9f${sequence}0`,
  sequence,
  type: 'computer.updated',
  workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
  created_at: '2026-11-09T18:00:00Z',
  computer: { id: '01m6cnenctgek8472bc9m7jfnzd', name: 'box', state },
});

let server: SseServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(options: SseServerOptions = {}) {
  server = await startSseServer({ routes: { [RUN]: accepted }, ...options });
  return server;
}

/** `svc` in process against the SSE server, its output kept as bytes and readable while it runs. */
function svc(sse: SseServer, argv: string[], io: Partial<CliIo> = {}) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let settled = false;
  const done = run(argv, {
    env: { SVC_BASE_URL: sse.baseUrl, SVC_ACCESS_TOKEN: 'header.payload.signature' },
    isTTY: false,
    ...io,
    stdout: { write: (chunk: string | Uint8Array) => out.push(Buffer.from(chunk)) },
    stderr: { write: (chunk: string | Uint8Array) => err.push(Buffer.from(chunk)) },
  }).finally(() => {
    settled = true;
  });
  return {
    done,
    settled: () => settled,
    stdout: () => Buffer.concat(out),
    stderr: () => Buffer.concat(err).toString(),
  };
}

describe('svc computers run --follow', () => {
  test('prints the first line while the command still runs, then exits with its exit code', async () => {
    const sse = await serve();
    sse.stream(OUTPUT);
    const running = svc(sse, ['computers', 'run', 'dev', 'box', '--follow', '--', 'make', 'test']);
    await expect.poll(() => sse.openCount(OUTPUT)).toBe(1);
    sse.push(OUTPUT, 'output', chunk('stdout', 'compiling\n'));
    await expect.poll(() => running.stdout().toString()).toBe('compiling\n');
    // The first line is out, and the command has not ended: the end event is not even sent yet.
    const firstLineAt = performance.now();
    expect(running.settled()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const exitSentAt = performance.now();
    sse.push(OUTPUT, 'output', chunk('stderr', 'warning\n'));
    sse.push(OUTPUT, 'output', chunk('stdout', Buffer.from([0, 0xff, 10]).toString('base64'), 'base64'));
    sse.push(OUTPUT, 'exit', exit(2));
    expect(firstLineAt).toBeLessThan(exitSentAt);
    expect(await running.done).toBe(2);
    expect(running.stdout()).toEqual(Buffer.concat([Buffer.from('compiling\n'), Buffer.from([0, 0xff, 10])]));
    expect(running.stderr()).toBe('warning\n');
    expect(sse.requests[0]?.body).toEqual({ argv: ['make', 'test'] });
  });

  test('a failed operation: exit 1 with its error on stderr', async () => {
    const sse = await serve();
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('stdout', 'half\n') },
      { event: 'failed', data: { code: 'invalid_state', message: 'the computer left running', details: {} } },
    ]);
    const running = svc(sse, ['computers', 'run', 'dev', 'box', '--follow', '--', 'sleep', '600']);
    expect(await running.done).toBe(1);
    expect(running.stdout().toString()).toBe('half\n');
    expect(running.stderr()).toContain('error: the computer left running');
    expect(running.stderr()).toContain('code: invalid_state');
  });

  test('resumes a dropped connection where it stopped: no line lost, none twice', async () => {
    const sse = await serve({ plan: ({ connection }) => (connection === 0 ? { dropAfter: 1 } : {}) });
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('stdout', 'one\n') },
      { event: 'output', data: chunk('stdout', 'two\n') },
      { event: 'exit', data: exit(0) },
    ]);
    const running = svc(sse, ['computers', 'run', 'dev', 'box', '--follow', '--', 'true']);
    expect(await running.done).toBe(0);
    expect(running.stdout().toString()).toBe('one\ntwo\n');
    expect(
      sse.requests.filter((r) => r.path.endsWith('/output')).map((r) => r.headers['last-event-id']),
    ).toEqual([undefined, '1']);
  });

  test('Ctrl-C stops following: exit 130, the command goes on, and how to resume', async () => {
    const sse = await serve();
    sse.stream(OUTPUT, [{ event: 'output', data: chunk('stdout', 'started\n') }]);
    const interrupt = new AbortController();
    const running = svc(sse, ['computers', 'run', 'dev', 'box', '--follow', '--', 'sleep', '600'], {
      signal: interrupt.signal,
    });
    await expect.poll(() => running.stdout().toString()).toBe('started\n');
    interrupt.abort();
    expect(await running.done).toBe(130);
    expect(running.stderr()).toContain('The command goes on running.');
    expect(running.stderr()).toContain(`svc operations output ${OP} --last-event-id 1`);
    await expect.poll(() => sse.openCount(OUTPUT)).toBe(0);
  });
});

describe('svc workspaces events', () => {
  test('-o json: one JSON object per event, as they come, until interrupted', async () => {
    const sse = await serve();
    sse.stream(EVENTS, [{ event: 'computer.updated', data: computerEvent(1, 'starting') }], { live: true });
    const interrupt = new AbortController();
    const tail = svc(sse, ['workspaces', 'events', 'dev', '--after', '0', '-o', 'json'], {
      signal: interrupt.signal,
    });
    await expect.poll(() => tail.stdout().toString().split('\n').length).toBe(2);
    sse.push(EVENTS, 'computer.updated', computerEvent(2, 'running'));
    await expect.poll(() => tail.stdout().toString().split('\n').length).toBe(3);
    interrupt.abort();
    expect(await tail.done).toBe(130);
    const lines = tail
      .stdout()
      .toString()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      { event: 'computer.updated', id: '1', data: computerEvent(1, 'starting') },
      { event: 'computer.updated', id: '2', data: computerEvent(2, 'running') },
    ]);
    expect(sse.requests[0]?.query.get('after')).toBe('0');
    expect(tail.stderr()).toContain('svc workspaces events dev --last-event-id 2');
  });

  test('by default one readable line per event; unknown events are skipped', async () => {
    const sse = await serve();
    sse.stream(EVENTS, [
      { event: 'computer.updated', data: computerEvent(1, 'running') },
      { event: 'billing.updated', data: { plan: 'pro' } },
      { event: 'computer.updated', data: computerEvent(3, 'stopping') },
    ]);
    const interrupt = new AbortController();
    const tail = svc(sse, ['workspaces', 'events', 'dev', '--last-event-id', '0'], {
      signal: interrupt.signal,
    });
    await expect.poll(() => tail.stdout().toString().split('\n').length).toBe(3);
    interrupt.abort();
    expect(await tail.done).toBe(130);
    expect(tail.stdout().toString()).toBe(
      '1 computer.updated computer box (01m6cnenctgek8472bc9m7jfnzd) running\n' +
        '3 computer.updated computer box (01m6cnenctgek8472bc9m7jfnzd) stopping\n',
    );
    expect(sse.requests[0]?.headers['last-event-id']).toBe('0');
  });

  test('an error before the stream is the API error: 404 exits 4 with its code', async () => {
    const sse = await serve();
    const tail = svc(sse, ['workspaces', 'events', 'nope']);
    expect(await tail.done).toBe(4);
    expect(tail.stderr()).toContain('code: not_found (HTTP 404)');
  });
});
