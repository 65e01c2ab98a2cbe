// The stream tools and run_computer's output progress, over streamable HTTP and over stdio (the built
// entry, with a key file), against a Server-Sent Events server written from the stream spec
// (@svc/tools/sse-server) that also answers the JSON calls around the streams.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { type SseServer, type SseServerOptions, startSseServer } from '@svc/tools/sse-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHttpHandler } from '../src/http.js';
import { OUTPUT_MESSAGE_MAX } from '../src/output-progress.js';
import { writeKeyFile } from './support/key-file.js';
import { serve } from './support/serve.js';
import { recordProgress } from './support/wire-progress.js';

const ENTRY = fileURLToPath(new URL('../dist/stdio.js', import.meta.url));
const WS = '01m6bxdm0dxxxstsc03qpv3hzmd';
const operation = (id: string, state: string, extra: object = {}) => ({
  id,
  workspace_id: WS,
  type: 'computer.exec',
  state,
  progress: state === 'succeeded' ? 100 : 0,
  target: { type: 'computer', id: '01m6cnenctgek8472bc9m7jfnzd' },
  created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
  created_at: '2026-11-09T18:00:00Z',
  ...extra,
});
const execution = {
  exit_code: 0,
  encoding: 'utf-8',
  stdout: 'compiling\n',
  stderr: 'warning\n',
  stdout_truncated: false,
  stderr_truncated: false,
  timed_out: false,
  duration_ms: 40,
};
const chunk = (stream: string, data: string) => ({ stream, offset: 0, encoding: 'utf-8', data });
const exit = {
  exit_code: 0,
  stdout_truncated: false,
  stderr_truncated: false,
  timed_out: false,
  duration_ms: 40,
};

/** One API for every test: each `run` starts a new operation, whose output stream the test writes. */
async function startApi() {
  let runs = 0;
  const finished = new Set<string>();
  const idOf = (n: number) => `01m6e5gr5mpj3ht9gw2s64n9f${String(n).padStart(2, '0')}`;
  // The server reads this object on every request: a run adds the poll of its operation.
  const routes: NonNullable<SseServerOptions['routes']> = {
    'POST /v1/auth/token': () => ({
      status: 200,
      body: {
        token: {
          access_token: 'at',
          token_type: 'Bearer',
          expires_in: 900,
          expires_at: '2099-01-01T00:00:00Z',
        },
      },
    }),
    'POST /v1/workspaces/dev/computers/box/run': () => {
      runs += 1;
      const id = idOf(runs);
      sse.stream(`/operations/${id}/output`);
      routes[`GET /v1/operations/${id}`] = () => ({
        status: 200,
        body: {
          operation: finished.has(id)
            ? operation(id, 'succeeded', { result: { execution } })
            : operation(id, 'running'),
        },
      });
      return { status: 202, body: { operations: [operation(id, 'pending')] } };
    },
  };
  const sse = await startSseServer({ routes });
  return { sse, idOf, runs: () => runs, finish: (id: string) => finished.add(id) };
}

const TRANSPORTS = [
  {
    name: 'streamable HTTP',
    async connect(sse: SseServer) {
      const mcp = createMcpHttpHandler({ apiBaseUrl: sse.baseUrl, minPollIntervalMs: 10 });
      const server = await serve(mcp);
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { Authorization: 'Bearer at' } },
      });
      return { transport: transport as Transport, close: server.close };
    },
  },
  {
    name: 'stdio',
    async connect(sse: SseServer) {
      expect(existsSync(ENTRY), 'build first: pnpm turbo run build --filter=@svc/mcp').toBe(true);
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [ENTRY],
        env: { SVC_KEY_FILE: writeKeyFile(sse.baseUrl), PATH: process.env.PATH ?? '' },
        stderr: 'pipe',
      });
      return { transport: transport as Transport, close: async () => undefined };
    },
  },
];

describe.each(TRANSPORTS)('stream tools over $name', ({ connect }) => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let client: Client;
  let wire: Progress[];
  let close: () => Promise<void>;

  beforeAll(async () => {
    api = await startApi();
    const connected = await connect(api.sse);
    close = connected.close;
    client = new Client({ name: 'streams-test', version: '0.0.0' });
    await client.connect(connected.transport);
    wire = recordProgress(connected.transport);
  });
  afterAll(async () => {
    await client?.close();
    await close?.();
    await api?.sse.close();
  });

  it('run_computer sends the output as it comes in progress notifications, then the finished operation', async () => {
    wire.length = 0;
    const id = api.idOf(api.runs() + 1);
    const path = `/operations/${id}/output`;
    const call = client.callTool(
      { name: 'run_computer', arguments: { workspace: 'dev', computer: 'box', argv: ['make'] } },
      undefined,
      { onprogress: () => {}, timeout: 30_000 },
    );
    await expect.poll(() => api.sse.openCount(path), { timeout: 10_000 }).toBe(1);
    api.sse.push(path, 'output', chunk('stdout', 'compiling\n'));
    // The first line arrives while the operation still runs and before its end is even sent.
    await expect.poll(() => wire.map((p) => p.message), { timeout: 10_000 }).toContain('compiling\n');
    const long = 'x'.repeat(OUTPUT_MESSAGE_MAX * 2 + 10);
    api.sse.push(path, 'output', chunk('stderr', 'warning\n'));
    api.sse.push(path, 'output', chunk('stdout', long));
    api.sse.push(path, 'exit', exit);
    api.finish(id);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      operations: [{ id, state: 'succeeded', result: { execution: { exit_code: 0 } } }],
    });
    const output = wire.filter((p) => p.total === undefined);
    expect(output.map((p) => p.message).join('')).toBe(`compiling\n[stderr] warning\n${long}`);
    expect(output.every((p) => (p.message?.length ?? 0) <= OUTPUT_MESSAGE_MAX + '[stderr] '.length)).toBe(
      true,
    );
    const values = wire.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
  });

  it('stream_operation_output reads the events after a cursor, with the next cursor and whether it ended', async () => {
    const id = '01m6e5gr5mpj3ht9gw2s64n9fa0';
    api.sse.stream(`/operations/${id}/output`, [
      { event: 'output', data: chunk('stdout', 'a\n') },
      { event: 'output', data: chunk('stderr', 'b\n') },
      { event: 'exit', data: exit },
    ]);
    const first = await client.callTool({
      name: 'stream_operation_output',
      arguments: { operation: id, max_events: 2 },
    });
    expect(first.structuredContent).toMatchObject({ next_cursor: '2', ended: false });
    expect((first.structuredContent as { events: { id: string }[] }).events.map((e) => e.id)).toEqual([
      '1',
      '2',
    ]);
    const rest = await client.callTool({
      name: 'stream_operation_output',
      arguments: { operation: id, after: '2' },
    });
    expect(rest.structuredContent).toMatchObject({
      events: [{ event: 'exit', id: '3', data: exit }],
      next_cursor: '3',
      ended: true,
    });
    expect((rest.content as { text: string }[])[0]?.text).toBe(
      '1 events; stdout 0 bytes, stderr 0 bytes; exit code 0; ended.',
    );
  });

  it('stream_workspace_events waits at most wait_seconds, then returns what came, with the cursor', async () => {
    const path = '/workspaces/dev/events';
    api.sse.stream(path, [], { live: true });
    const started = performance.now();
    const empty = await client.callTool({
      name: 'stream_workspace_events',
      arguments: { workspace: 'dev', wait_seconds: 1 },
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    expect(empty.structuredContent).toEqual({ events: [], next_cursor: null, ended: false });
    const event = {
      id: '01m6e5gr5mpj3ht9gw2s64n9f80',
      sequence: 1,
      type: 'computer.created',
      workspace_id: WS,
      created_at: '2026-11-09T18:00:00Z',
      computer: { id: '01m6cnenctgek8472bc9m7jfnzd', name: 'box', state: 'creating' },
    };
    api.sse.push(path, 'computer.created', event);
    const read = await client.callTool({
      name: 'stream_workspace_events',
      arguments: { workspace: 'dev', after: '0', wait_seconds: 5 },
    });
    expect(read.structuredContent).toEqual({
      events: [{ event: 'computer.created', id: '1', data: event }],
      next_cursor: '1',
      ended: false,
    });
  });

  it('a refusal before the stream is the API error', async () => {
    const result = await client.callTool({
      name: 'stream_operation_output',
      arguments: { operation: '01m6e5gr5mpj3ht9gw2s64n9fzz' },
    });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(/^Error 404 not_found/);
  });
});
