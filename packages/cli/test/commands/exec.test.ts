// `svc computers exec <workspace> <computer> -- cmd args`: argv from the words after `--`, the
// command's output on svc's streams, its exit code as svc's, and `--stdin` from svc's own stdin.
import { describe, expect, test } from 'vitest';
import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';
import { envelope, fakeApi } from '../support/io.js';

const BASE = 'https://svc.test/v1';
const env = { SVC_BASE_URL: BASE, SVC_ACCESS_TOKEN: 'header.payload.signature' };
const ROUTE = 'POST /workspaces/dev/computers/box/exec';

const execution = (fields: Record<string, unknown> = {}) => ({
  execution: {
    exit_code: 0,
    encoding: 'utf-8',
    stdout: '',
    stderr: '',
    stdout_truncated: false,
    stderr_truncated: false,
    timed_out: false,
    duration_ms: 5,
    ...fields,
  },
});

/** A run of `svc` that keeps its output as bytes (a command's output need not be text). */
async function svcBytes(argv: string[], io: Partial<CliIo> = {}) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const code = await run(argv, {
    env,
    isTTY: false,
    ...io,
    stdout: { write: (chunk: string | Uint8Array) => out.push(Buffer.from(chunk)) },
    stderr: { write: (chunk: string | Uint8Array) => err.push(Buffer.from(chunk)) },
  });
  return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() };
}

describe('svc computers exec', () => {
  test('sends the words after -- as argv, prints stdout and stderr to svc’s, and exits 0', async () => {
    const api = fakeApi({
      [ROUTE]: () => ({ status: 200, body: execution({ stdout: 'out\n', stderr: 'err\n' }) }),
    });
    const outcome = await svcBytes(
      ['computers', 'exec', 'dev', 'box', '--timeout-seconds', '5', '--', 'ls', '-la', '/tmp'],
      { fetch: api.fetch },
    );
    expect(api.seen[0]?.body).toEqual({ argv: ['ls', '-la', '/tmp'], timeout_seconds: 5 });
    expect(outcome).toEqual({ code: 0, stdout: Buffer.from('out\n'), stderr: 'err\n' });
  });

  test("exits with the command's exit code, and says on stderr when output was cut or the command killed", async () => {
    const api = fakeApi({
      [ROUTE]: () => ({
        status: 200,
        body: execution({ exit_code: 124, stdout: 'part', stdout_truncated: true, timed_out: true }),
      }),
    });
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box', '--', 'sleep', '60'], {
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(124);
    expect(outcome.stdout.toString()).toBe('part');
    expect(outcome.stderr).toContain('stdout was cut at max_output_bytes');
    expect(outcome.stderr).toContain('killed');
    expect(outcome.stderr).not.toContain('error:');
  });

  test('--stdin sends svc’s standard input as base64; base64 output is written as the bytes it encodes', async () => {
    const bytes = Buffer.from([0, 1, 0xff, 10]);
    const api = fakeApi({
      [ROUTE]: (seen) => ({
        status: 200,
        body: execution({ encoding: 'base64', stdout: (seen.body as { stdin: string }).stdin }),
      }),
    });
    async function* stdin() {
      yield bytes.subarray(0, 2);
      yield bytes.subarray(2);
    }
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box', '--stdin', '--', 'cat'], {
      fetch: api.fetch,
      stdin: stdin(),
    });
    expect(api.seen[0]?.body).toEqual({
      argv: ['cat'],
      stdin: bytes.toString('base64'),
      stdin_encoding: 'base64',
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toEqual(bytes);
  });

  test('-o json prints the answer and exits 0 whatever the exit code', async () => {
    const api = fakeApi({ [ROUTE]: () => ({ status: 200, body: execution({ exit_code: 3 }) }) });
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box', '-o', 'json', '--', 'false'], {
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout.toString())).toEqual(execution({ exit_code: 3 }));
  });

  test('a computer that is not running is an API error: exit 5 with the code on stderr', async () => {
    const api = fakeApi({
      [ROUTE]: () => ({ status: 409, body: envelope('invalid_state', 'box is stopped', 'req-9') }),
    });
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box', '--', 'true'], { fetch: api.fetch });
    expect(outcome.code).toBe(5);
    expect(outcome.stderr).toContain('code: invalid_state (HTTP 409)');
  });

  test('without a command it is a usage error and nothing is sent', async () => {
    const api = fakeApi({});
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box'], { fetch: api.fetch });
    expect(outcome.code).toBe(2);
    expect(api.seen).toHaveLength(0);
  });
});

// `svc computers run … -- cmd`: the long form (design §13) answers 202 with a `computer.exec`
// operation; with --wait the command's output, from the operation's `result`, is printed as exec's.
describe('svc computers run', () => {
  const RUN = 'POST /workspaces/dev/computers/box/run';
  const operation = (fields: Record<string, unknown>) => ({
    id: '01m6e5gr5mpj3ht9gw2s64n9f74',
    workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    type: 'computer.exec',
    target: { type: 'computer', id: '01m6cnenctgek8472bc9m7jfnzd' },
    created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
    created_at: '2026-11-09T18:00:00Z',
    updated_at: '2026-11-09T18:00:00Z',
    ...fields,
  });
  const accepted = () => ({
    status: 202,
    body: { operations: [operation({ state: 'pending', progress: 0 })] },
  });
  const finished = (fields: Record<string, unknown>) => ({
    status: 200,
    body: { operation: operation({ state: 'succeeded', progress: 100, ...fields }) },
  });
  const POLL = `GET /operations/${operation({}).id}`;

  test("--wait prints the result's stdout and stderr and exits with its exit code", async () => {
    const api = fakeApi({
      [RUN]: accepted,
      [POLL]: () => finished({ result: execution({ exit_code: 2, stdout: 'built\n', stderr: 'warning\n' }) }),
    });
    const outcome = await svcBytes(
      ['computers', 'run', 'dev', 'box', '--timeout-seconds', '1800', '--wait', '--', 'make', 'test'],
      { fetch: api.fetch },
    );
    expect(api.seen[0]?.body).toEqual({ argv: ['make', 'test'], timeout_seconds: 1800 });
    expect(api.seen.map((s) => `${s.method} ${s.url.pathname}`)).toEqual([
      'POST /v1/workspaces/dev/computers/box/run',
      'GET /v1/operations/01m6e5gr5mpj3ht9gw2s64n9f74',
    ]);
    expect(outcome).toEqual({ code: 2, stdout: Buffer.from('built\n'), stderr: 'warning\n' });
  });

  test('--stdin sends svc’s standard input, as exec does', async () => {
    const api = fakeApi({ [RUN]: accepted, [POLL]: () => finished({ result: execution({ stdout: 'x' }) }) });
    async function* stdin() {
      yield Buffer.from('input');
    }
    const outcome = await svcBytes(['computers', 'run', 'dev', 'box', '--stdin', '--wait', '--', 'cat'], {
      fetch: api.fetch,
      stdin: stdin(),
    });
    expect(api.seen[0]?.body).toEqual({
      argv: ['cat'],
      stdin: Buffer.from('input').toString('base64'),
      stdin_encoding: 'base64',
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout.toString()).toBe('x');
  });

  test('a failed operation is an error: its code and message on stderr, exit 1', async () => {
    const api = fakeApi({
      [RUN]: accepted,
      [POLL]: () => ({
        status: 200,
        body: {
          operation: operation({
            state: 'failed',
            progress: 0,
            error: {
              code: 'invalid_state',
              message: 'the computer left running (it is stopping) while the command ran',
              details: {},
              request_id: operation({}).id,
            },
          }),
        },
      }),
    });
    const outcome = await svcBytes(['computers', 'run', 'dev', 'box', '--wait', '--', 'sleep', '600'], {
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('invalid_state');
    expect(outcome.stderr).toContain('left running');
  });

  test('without --wait it prints the operation it started and exits 0', async () => {
    const api = fakeApi({ [RUN]: accepted });
    const outcome = await svcBytes(['computers', 'run', 'dev', 'box', '-o', 'json', '--', 'make'], {
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout.toString()).operations[0]).toMatchObject({ type: 'computer.exec' });
    expect(api.seen).toHaveLength(1);
  });
});

describe('a program the computer does not have', () => {
  test.each<[string, { stderr: string; argv: string[]; want: { code: number; stderr: string } }]>([
    [
      'dash (Debian, Ubuntu)',
      {
        stderr: 'sh: 1: exec: make: not found\n',
        argv: ['make'],
        want: { code: 127, stderr: 'svc: make: command not found in the computer\n' },
      },
    ],
    [
      'busybox',
      {
        stderr: 'sh: exec: line 0: make: not found\n',
        argv: ['make', '-j4'],
        want: { code: 127, stderr: 'svc: make: command not found in the computer\n' },
      },
    ],
    [
      'bash',
      {
        stderr: 'sh: line 1: exec: /opt/x: not found\n',
        argv: ['/opt/x'],
        want: { code: 127, stderr: 'svc: /opt/x: command not found in the computer\n' },
      },
    ],
    [
      'the simulated driver',
      {
        stderr: 'make: command not found (simulated driver)\n',
        argv: ['make'],
        want: { code: 127, stderr: 'svc: make: command not found in the computer\n' },
      },
    ],
    [
      'a program not found by the program run (its own words are kept)',
      {
        stderr: 'sh: 1: make: not found\n',
        argv: ['sh', '-c', 'make'],
        want: { code: 127, stderr: 'sh: 1: make: not found\n' },
      },
    ],
  ])('%s: said in svc’s words, exit 127', async (_name, { stderr, argv, want }) => {
    const api = fakeApi({ [ROUTE]: () => ({ status: 200, body: execution({ exit_code: 127, stderr }) }) });
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box', '--', ...argv], { fetch: api.fetch });
    expect({ code: outcome.code, stderr: outcome.stderr }).toEqual(want);
  });

  test('exit 127 with other words, or with output, is printed as it came', async () => {
    const api = fakeApi({
      [ROUTE]: () => ({
        status: 200,
        body: execution({ exit_code: 127, stdout: 'made\n', stderr: 'make: not found\n' }),
      }),
    });
    const outcome = await svcBytes(['computers', 'exec', 'dev', 'box', '--', 'make'], { fetch: api.fetch });
    expect(outcome).toEqual({ code: 127, stdout: Buffer.from('made\n'), stderr: 'make: not found\n' });
  });
});
