import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeKeyFile } from './support/key-file.js';
import { expectedTools } from './support/spec-tools.js';
import { recordProgress } from './support/wire-progress.js';

/** The built entry, as `svc-mcp` and MCP client configs run it (turbo builds before testing). */
const ENTRY = fileURLToPath(new URL('../dist/stdio.js', import.meta.url));

function spawnClient(env: Record<string, string>, flags: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ENTRY, ...flags],
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { transport, stderr: () => stderr };
}

describe('stdio entry against the Prism mock', () => {
  let client: Client;
  /** Progress notifications as they come off the wire (see `recordProgress`). */
  let wire: Progress[] = [];

  beforeAll(async () => {
    expect(existsSync(ENTRY), 'build first: pnpm turbo run build --filter=@svc/mcp').toBe(true);
    const { transport } = spawnClient({
      SVC_KEY_FILE: writeKeyFile(inject('prismUrl')),
      PATH: process.env.PATH ?? '',
    });
    client = new Client({ name: 'stdio-test', version: '0.0.0' });
    await client.connect(transport);
    wire = recordProgress(transport);
  });
  afterAll(() => client?.close());

  it('lists exactly the spec’s operations as tools', async () => {
    const want = expectedTools().map((t) => t.name);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(want);
    // Compact lists hints that differ from MCP's defaults: destructive (the default) is absent, so true.
    const hints = tools.find((t) => t.name === 'delete_computer')?.annotations;
    expect(hints).toMatchObject({ idempotentHint: true, openWorldHint: false });
    expect(hints?.destructiveHint ?? true).toBe(true);
    expect(hints?.readOnlyHint ?? false).toBe(false);
  });

  it('calls a tool with the key file’s token: list_computers', async () => {
    const result = await client.callTool({
      name: 'list_computers',
      arguments: { workspace: 'acme-dev', limit: 2 },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      computers: expect.any(Array),
      has_more: expect.any(Boolean),
    });
    expect((result.content as { text: string }[])[0]?.text).toMatch(/^\d+ computers/);
  });

  it('waits for a long-running call and reports progress', async () => {
    wire.length = 0;
    const result = await client.callTool(
      { name: 'restart_computer', arguments: { workspace: 'acme-dev', computer: 'box-1' } },
      undefined,
      // Asking for progress sends a progressToken; the notifications are read off the wire.
      { onprogress: () => {} },
    );
    const progress = [...wire];
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { operations: { state: string }[] }).operations[0]?.state).toBe(
      'succeeded',
    );
    // The mock answers every poll with one example operation (another id), so only the shape is exact here.
    expect(progress.length).toBeGreaterThan(0);
    expect(
      progress.every((p, i) => p.total === 100 && (i === 0 || p.progress > (progress[i - 1]?.progress ?? 0))),
    ).toBe(true);
  });
});

describe('stdio entry without credentials', () => {
  it('exits 1 and says why on stderr when SVC_KEY_FILE is unset', async () => {
    const { transport, stderr } = spawnClient({ PATH: process.env.PATH ?? '' });
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    await closed;
    expect(stderr()).toMatch(/key_file_not_configured: SVC_KEY_FILE is not set/);
  });
});

describe('stdio entry flags', () => {
  it('--toolsets and --mode choose the tools, as /mcp?toolsets=…&mode=… does', async () => {
    const env = { SVC_KEY_FILE: writeKeyFile(inject('prismUrl')), PATH: process.env.PATH ?? '' };
    const client = new Client({ name: 'stdio-flags', version: '0.0.0' });
    await client.connect(spawnClient(env, ['--toolsets', 'catalog']).transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_sizes', 'list_images']);
    await client.close();
    const dynamic = new Client({ name: 'stdio-flags', version: '0.0.0' });
    await dynamic.connect(spawnClient(env, ['--mode', 'dynamic']).transport);
    expect((await dynamic.listTools()).tools).toHaveLength(3);
    await dynamic.close();
  });

  it('exits 1 naming the known toolsets when one is unknown', async () => {
    const { transport, stderr } = spawnClient({ PATH: process.env.PATH ?? '' }, ['--toolsets', 'nope']);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    await closed;
    expect(stderr()).toMatch(/--toolsets: unknown toolset nope; known: identity, workspaces/);
  });
});
