import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeKeyFile } from './support/key-file.js';
import { defaultTools, expectedTools } from './support/spec-tools.js';
import { recordProgress } from './support/wire-progress.js';
import { recordResults } from './support/wire-results.js';

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
  /** The bytes of each result as it came off the wire (see `recordResults`). */
  let results: ReturnType<typeof recordResults> = [];

  beforeAll(async () => {
    expect(existsSync(ENTRY), 'build first: pnpm turbo run build --filter=@svc/mcp').toBe(true);
    const { transport } = spawnClient({
      SVC_KEY_FILE: writeKeyFile(inject('prismUrl')),
      PATH: process.env.PATH ?? '',
    });
    client = new Client({ name: 'stdio-test', version: '0.0.0' });
    await client.connect(transport);
    wire = recordProgress(transport);
    results = recordResults(transport);
  });
  afterAll(() => client?.close());

  it('lists the default toolsets’ operations as tools, within the budget of tools/list', async () => {
    const want = defaultTools().map((t) => t.name);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(want);
    // The same budget as over HTTP (test/modes.test.ts), measured off this transport's wire.
    const bytes = results.at(-1)?.bytes ?? Number.NaN;
    console.info(`tools/list over stdio, no option: ${tools.length} tools, ${bytes} bytes`);
    expect(bytes).toBeLessThanOrEqual(40_000);
    expect(tools.find((t) => t.name === 'delete_computer')?.annotations).toEqual({
      title: 'Delete a computer',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
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

describe('stdio entry flags and environment', () => {
  const env = () => ({ SVC_KEY_FILE: writeKeyFile(inject('prismUrl')), PATH: process.env.PATH ?? '' });
  const names = async (extra: Record<string, string>, flags: string[]) => {
    const client = new Client({ name: 'stdio-flags', version: '0.0.0' });
    await client.connect(spawnClient({ ...env(), ...extra }, flags).transport);
    try {
      return (await client.listTools()).tools.map((t) => t.name);
    } finally {
      await client.close();
    }
  };

  it('--toolsets and --mode choose the tools, as /mcp?toolsets=…&mode=… does', async () => {
    expect(await names({}, ['--toolsets', 'catalog'])).toEqual(['list_sizes', 'list_images']);
    expect(await names({}, ['--mode', 'dynamic'])).toHaveLength(3);
  });

  it('the full set is one option away: --toolsets all, or SVC_MCP_TOOLSETS=all; the flag wins over the variable', async () => {
    const all = expectedTools().map((t) => t.name);
    expect(await names({}, ['--toolsets', 'all'])).toEqual(all);
    expect(await names({ SVC_MCP_TOOLSETS: 'all' }, [])).toEqual(all);
    expect(await names({ SVC_MCP_TOOLSETS: 'all' }, ['--toolsets', 'catalog'])).toEqual([
      'list_sizes',
      'list_images',
    ]);
    expect(await names({ SVC_MCP_TOOLSETS: 'default,webhooks' }, [])).toEqual(
      expectedTools()
        .filter((t) => t.toolset === 'webhooks' || defaultTools().some((d) => d.name === t.name))
        .map((t) => t.name),
    );
  });

  it.each([
    [
      '--toolsets',
      {},
      ['--toolsets', 'nope'],
      /--toolsets: unknown toolset nope; known: identity, workspaces/,
    ],
    [
      'SVC_MCP_TOOLSETS',
      { SVC_MCP_TOOLSETS: 'nope' },
      [],
      /SVC_MCP_TOOLSETS: unknown toolset nope; known: identity/,
    ],
  ])('exits 1 naming the known toolsets when %s names an unknown one', async (_, extra, flags, want) => {
    const { transport, stderr } = spawnClient({ PATH: process.env.PATH ?? '', ...extra }, flags);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    await closed;
    expect(stderr()).toMatch(want);
  });
});
