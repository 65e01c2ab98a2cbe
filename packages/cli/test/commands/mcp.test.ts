// `svc mcp` against the real server (the built `svc-server --sandbox`): the tools, a call made with the
// key file's credentials, and a stdout that carries nothing but MCP frames.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteOperationIds, byteRequestBody, byteResponse, listOperations, loadDocument } from '@svc/contract';
import { toolName } from '@svc/mcp';
import { serverBuilt, spawnServer } from '@svc/tools/server-process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, connectSvcMcp } from '../support/mcp-client.js';

/** Runs `svc mcp`, writes `frames` to its stdin, ends stdin and collects what it wrote and its exit code. */
function runRaw(
  env: Record<string, string>,
  frames: unknown[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'mcp'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const requests = frames.filter((frame) => (frame as { id?: unknown }).id !== undefined).length;
  let stdout = '';
  let stderr = '';
  // A process that refuses to start closes its stdin early; writing to it then is not the test's failure.
  child.stdin.on('error', () => {});
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    // Hang up once every request has its answer, as an agent closing its session does.
    if (stdout.split('\n').filter(Boolean).length >= requests) child.stdin.end();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  for (const frame of frames) child.stdin.write(`${JSON.stringify(frame)}\n`);
  if (requests === 0) child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const missing = !existsSync(BIN) || !serverBuilt();
// turbo builds the CLI and the server first: under CI a missing build is a failure, not a skip.
if (missing && process.env.CI)
  throw new Error('svc mcp test cannot run under CI: build the CLI and the server first');

describe.skipIf(missing)('svc mcp (stdio) against svc-server --sandbox', () => {
  let server: Awaited<ReturnType<typeof spawnServer>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await spawnServer();
    env = { SVC_KEY_FILE: server.keyFilePath, SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-mcp-')) };
  });
  afterAll(() => server?.close());

  test('with SVC_MCP_TOOLSETS=all, lists every operation but getHealth, exchangeToken and the live screen as a tool (a file’s bytes as text tools); calls one as the key', async () => {
    const { client } = await connectSvcMcp({ ...env, SVC_MCP_TOOLSETS: 'all' });
    try {
      // A byte operation on a file is a text tool named for what it does (`read_…`, `write_…`); a tar's
      // none; a terminal's input (`send_…`) a tool that takes keys as text; a screen's picture the
      // screen tool, `use_computer_screen`.
      const document = loadDocument();
      const bytes = new Set(byteOperationIds(document));
      const isFile = (op: ReturnType<typeof listOperations>[number]) =>
        (byteResponse(document, op) ?? byteRequestBody(document, op))?.mediaType ===
        'application/octet-stream';
      const isPicture = (op: ReturnType<typeof listOperations>[number]) =>
        byteResponse(document, op)?.mediaType === 'image/png';
      const want = listOperations(document)
        .filter((op) => op.operationId !== 'getHealth' && op.operationId !== 'exchangeToken')
        // A stream of pictures (the live screen) is for a person to watch: no tool.
        .filter((op) => op.operationId !== 'streamComputerScreenFrames')
        .filter((op) => !bytes.has(op.operationId) || isFile(op) || isPicture(op))
        .map((op) =>
          isPicture(op)
            ? 'use_computer_screen'
            : toolName(op.operationId)
                .replace(/^download_/, 'read_')
                .replace(/^upload_/, 'write_'),
        );
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(want);

      const me = await client.callTool({ name: 'get_me', arguments: {} });
      expect(me.isError).toBeFalsy();
      const keyFile = JSON.parse(readFileSync(server.keyFilePath, 'utf8')) as { principal_id: string };
      expect(me.structuredContent).toMatchObject({
        identity: { principal: { id: keyFile.principal_id, kind: 'service_account' } },
      });
    } finally {
      await client.close();
    }
  });

  test('stdout holds only JSON-RPC frames; the end of stdin ends the process with 0', async () => {
    const { code, stdout, stderr } = await runRaw(env, [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '0' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]);
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        jsonrpc: '2.0',
        id: 1,
        result: expect.objectContaining({ serverInfo: expect.anything() }),
      }),
      expect.objectContaining({ jsonrpc: '2.0', id: 2, result: { tools: expect.any(Array) } }),
    ]);
    expect(stderr).toContain(`serving ${server.baseUrl}`);
  });

  test.each([
    ['no credentials at all', { given: { SVC_BASE_URL: 'http://127.0.0.1:9/v1' }, want: /Not signed in/ }],
    ['a key file that is not there', { given: { SVC_KEY_FILE: '/nonexistent/key.json' }, want: /key/i }],
  ])('%s: exits 3 (authentication) before serving, stdout empty', async (_name, { given, want }) => {
    const { code, stdout, stderr } = await runRaw(
      { SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-mcp-none-')), ...given },
      [],
    );
    expect(code).toBe(3);
    expect(stdout).toBe('');
    expect(stderr).toMatch(want);
  });
});
