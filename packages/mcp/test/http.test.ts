import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMcpHttpHandler } from '../src/http.js';
import { serve } from './support/serve.js';
import { defaultTools } from './support/spec-tools.js';
import { recordProgress } from './support/wire-progress.js';

const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
const specTools = defaultTools().map((t) => t.name);

/** The progress notifications each client received, off the wire (see `recordProgress`). */
const wires = new WeakMap<Client, Progress[]>();

async function connect(url: string, token = 'any-token-the-mock-accepts') {
  const client = new Client({ name: 'http-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  wires.set(client, recordProgress(transport));
  return client;
}

describe('streamable HTTP against the Prism mock', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  let client: Client;

  beforeAll(async () => {
    const mcp = createMcpHttpHandler({ apiBaseUrl: inject('prismUrl'), minPollIntervalMs: 10 });
    server = await serve((request) =>
      new URL(request.url).pathname === '/mcp'
        ? mcp(request)
        : Promise.resolve(new Response(null, { status: 404 })),
    );
    client = await connect(server.url);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('lists the default toolsets’ operations as tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(specTools);
  });

  it('calls a tool end to end: get_me returns the API’s JSON', async () => {
    const result = await client.callTool({ name: 'get_me', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      identity: { principal: { id: expect.stringMatching(ID) } },
    });
    expect((result.content as { text: string }[])[0]?.text).toMatch(/^identity/);
  });

  it('reads and writes a file as text through the file tools (the mock answers bytes)', async () => {
    const where = { workspace: 'acme-dev', computer: 'build-runner-1', path: '/home/svc/report.csv' };
    const read = await client.callTool({ name: 'read_computer_file', arguments: where });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ path: where.path, encoding: 'utf-8' });
    expect((read.structuredContent as { content: string }).content.length).toBeGreaterThan(0);
    const written = await client.callTool({
      name: 'write_computer_file',
      arguments: { ...where, content: 'id,total\n1,2\n' },
    });
    expect(written.isError).toBeFalsy();
    expect(written.structuredContent).toMatchObject({ file: { type: 'file' } });
  });

  it('waits for a long-running call and streams progress', async () => {
    const wire = wires.get(client) ?? [];
    wire.length = 0;
    const result = await client.callTool(
      {
        name: 'create_computer',
        arguments: { workspace: 'acme-dev', name: 'box-1', size: 'small', image: 'ubuntu-2404' },
      },
      undefined,
      { onprogress: () => {} },
    );
    const progress = [...wire];
    expect(result.isError).toBeFalsy();
    const ops = (result.structuredContent as { operations: { state: string }[] }).operations;
    expect(ops.map((op) => op.state)).toEqual(['succeeded']);
    expect(progress.map((p) => p.progress)).toEqual([0, 100]);
    expect(progress.every((p) => p.total === 100)).toBe(true);
  });

  it('returns at once with wait: false', async () => {
    const result = await client.callTool({
      name: 'stop_computer',
      arguments: { workspace: 'acme-dev', computer: 'box-1', wait: false },
    });
    const ops = (result.structuredContent as { operations: { state: string }[] }).operations;
    expect(ops[0]?.state).not.toBe('succeeded');
  });

  it('refuses bad arguments as a tool error, before calling the API', async () => {
    const result = await client.callTool({ name: 'get_computer', arguments: { workspace: 'acme-dev' } });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(/computer/);
  });
});

describe('HTTP refusals', () => {
  const mcp = createMcpHttpHandler({
    apiBaseUrl: 'http://api.invalid/v1',
    newRequestId: () => '01m6ty2frhn2f2c4v4t96368nge',
  });
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
  });
  const post = (headers: Record<string, string>) =>
    new Request('http://svc.test/mcp', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: initialize,
    });

  it.each([
    ['no Authorization header', {}],
    ['another scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty Bearer', { Authorization: 'Bearer ' }],
  ])('refuses %s with 401, WWW-Authenticate and the error envelope', async (_, headers) => {
    const response = await mcp(post(headers));
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toBe('Bearer');
    expect(await response.json()).toEqual({
      error: {
        code: 'unauthenticated',
        message: expect.any(String),
        details: {},
        request_id: '01m6ty2frhn2f2c4v4t96368nge',
      },
    });
  });

  it('refuses a no-token request from the SDK client', async () => {
    const server = await serve(mcp);
    const client = new Client({ name: 'anon', version: '0' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`))),
    ).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('"code":"unauthenticated"'),
    });
    await server.close();
  });

  it('refuses a token verifyToken rejects, with error="invalid_token"', async () => {
    const strict = createMcpHttpHandler({
      apiBaseUrl: 'http://api.invalid/v1',
      verifyToken: (t) => t === 'good',
    });
    const response = await strict(post({ Authorization: 'Bearer bad' }));
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toBe('Bearer error="invalid_token"');
    expect((await strict(post({ Authorization: 'Bearer good' }))).status).toBe(200);
  });

  it('answers GET with 405 (stateless: no standalone stream)', async () => {
    const response = await mcp(
      new Request('http://svc.test/mcp', {
        headers: { Authorization: 'Bearer t', Accept: 'text/event-stream' },
      }),
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('POST');
    expect((await response.json()).error.code).toBe('method_not_allowed');
  });
});

describe('API refusals become tool errors', () => {
  const envelope = (code: string) => ({
    error: { code, message: `${code} here`, details: {}, request_id: '01m6ty2frhn2f2c4v4t96368nge' },
  });
  const seen: Request[] = [];
  const api = async (request: Request) => {
    seen.push(request);
    const status = request.headers.get('Authorization') === 'Bearer expired' ? 401 : 403;
    return new Response(JSON.stringify(envelope(status === 401 ? 'unauthenticated' : 'permission_denied')), {
      status,
      headers: { 'Content-Type': 'application/json', 'Request-Id': '01m6ty2frhn2f2c4v4t96368nge' },
    });
  };
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve(createMcpHttpHandler({ apiBaseUrl: 'http://api.test/v1', fetch: api }));
  });
  afterAll(() => server?.close());

  it.each([
    ['an expired token (the API’s 401)', { token: 'expired', status: 401, code: 'unauthenticated' }],
    ['a viewer stopping a computer (403)', { token: 'viewer', status: 403, code: 'permission_denied' }],
  ])('%s', async (_, { token, status, code }) => {
    const client = await connect(server.url, token);
    const result = await client.callTool({
      name: 'stop_computer',
      arguments: { workspace: 'dev', computer: 'box' },
    });
    await client.close();
    expect(result.isError).toBe(true);
    // The envelope as JSON text, not structuredContent: the output schema describes success only.
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse((result.content as { text: string }[])[1]?.text ?? '')).toEqual(envelope(code));
    expect((result.content as { text: string }[])[0]?.text).toBe(
      `Error ${status} ${code}: ${code} here (request_id 01m6ty2frhn2f2c4v4t96368nge)`,
    );
    const last = seen.at(-1);
    expect(last?.headers.get('Authorization')).toBe(`Bearer ${token}`);
    expect(last?.headers.get('Idempotency-Key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(new URL(last?.url ?? '').pathname).toBe('/v1/workspaces/dev/computers/box/stop');
  });
});
