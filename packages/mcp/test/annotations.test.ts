// Every tool's title and hints as a client receives them (`tools/list` over streamable HTTP, every
// toolset, each mode): a title in both places MCP has one, every hint stated, and hints that fit what
// the tool does, judged two ways: from the operation (its method, or the `x-svc.mcp` judgment of a
// custom action in the spec) and from the verb of the tool's name.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { listOperations, loadDocument, operationPolicy } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHttpHandler } from '../src/http.js';
import { toolName } from '../src/names.js';
import { serve } from './support/serve.js';
import { expectedTools } from './support/spec-tools.js';

const document = loadDocument();
const operations = new Map(listOperations(document).map((op) => [op.operationId, op]));
const specTools = expectedTools(document);

type Hints = { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
const READ: Hints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
/** Overwrites or removes what is there; the same call again leaves the same state. */
const REPLACE: Hints = { readOnlyHint: false, destructiveHint: true, idempotentHint: true };
const CREATE: Hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };

/** What the operation says: its method, or the spec's judgment of a custom action. */
function fromOperation(operationId: string): Hints {
  const op = operations.get(operationId);
  if (!op) throw new Error(`${operationId} is not in the spec`);
  const { mcp } = operationPolicy(document, op);
  if (mcp) return { readOnlyHint: false, destructiveHint: mcp.destructive, idempotentHint: mcp.idempotent };
  return { get: READ, put: REPLACE, patch: REPLACE, delete: REPLACE, post: CREATE }[
    op.method as 'get' | 'put' | 'patch' | 'delete' | 'post'
  ];
}

/** What the verb of a tool's name promises, where it promises something. */
const BY_VERB: [RegExp, Partial<Hints>][] = [
  [/^(get|list|read|stream)_/, { readOnlyHint: true, destructiveHint: false }],
  [/^(delete|update|write)_/, { readOnlyHint: false, destructiveHint: true, idempotentHint: true }],
  [/^create_/, { readOnlyHint: false, destructiveHint: false, idempotentHint: false }],
  [/^(exec|run)_/, { readOnlyHint: false, destructiveHint: true, idempotentHint: false }],
  // A terminal's keys run whatever the program makes of them, and type again each call: judged in the
  // spec (`x-svc.mcp` on a `send…`), as a custom action's are.
  [/^send_/, { readOnlyHint: false, destructiveHint: true, idempotentHint: false }],
];

describe('titles and hints as listed over streamable HTTP', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  const clients: Client[] = [];
  const list = async (query: string): Promise<Tool[]> => {
    const client = new Client({ name: 'annotations-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), {
        requestInit: { headers: { Authorization: 'Bearer any' } },
      }),
    );
    clients.push(client);
    return (await client.listTools()).tools;
  };

  beforeAll(async () => {
    // No API behind it: tools/list needs none.
    server = await serve(createMcpHttpHandler({ apiBaseUrl: 'http://127.0.0.1:9/v1' }));
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
  });

  describe.each([
    ['compact', '?toolsets=all'],
    ['full', '?mode=full&toolsets=all'],
    ['compact, no option', ''],
  ])('%s', (_, query) => {
    let tools: Tool[];
    beforeAll(async () => {
      tools = await list(query);
    });

    it('gives every tool a title, also as annotations.title (clients before 2025-06-18 read that one)', () => {
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools) {
        expect(tool.title, tool.name).toMatch(/^[A-Z]\S* /);
        expect(tool.annotations?.title, tool.name).toBe(tool.title);
      }
    });

    it('states every hint, so no client has to know MCP’s defaults (absent destructiveHint means true)', () => {
      for (const tool of tools)
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
          expect(typeof tool.annotations?.[hint], `${tool.name} ${hint}`).toBe('boolean');
    });

    it('derives the hints from the operation: its method, or the x-svc.mcp judgment of an action', () => {
      for (const tool of tools) {
        const spec = specTools.find((t) => t.name === tool.name);
        if (!spec) throw new Error(`${tool.name} is no tool of the spec`);
        expect(tool.annotations, tool.name).toEqual({
          title: tool.title,
          ...fromOperation(spec.hintsFrom ?? spec.operationId),
          openWorldHint: false,
        });
      }
    });

    it('gives hints that fit the verb of the name: reads and streams read, exec and run may destroy', () => {
      for (const tool of tools) {
        const rule = BY_VERB.find(([verb]) => verb.test(tool.name));
        if (rule) expect(tool.annotations, tool.name).toMatchObject(rule[1]);
        else {
          // Only a custom action's verb (start_, rotate_…) has no rule here: the spec judges it (x-svc.mcp).
          const spec = specTools.find((t) => t.name === tool.name);
          const op = operations.get(spec?.hintsFrom ?? spec?.operationId ?? '');
          expect(op && operationPolicy(document, op).mcp, `${tool.name}: no rule, no judgment`).toBeTruthy();
        }
      }
    });

    it('titles a tool named for another verb than its operation’s with that verb', () => {
      for (const tool of tools) {
        const spec = specTools.find((t) => t.name === tool.name);
        if (!spec || toolName(spec.operationId) === tool.name) continue;
        const verb = tool.name.split('_')[0] ?? '';
        expect(tool.title?.split(' ')[0]?.toLowerCase(), tool.name).toBe(verb);
      }
    });
  });

  it('the three tools singled out in the issue', async () => {
    const tools = new Map((await list('')).map((t) => [t.name, t]));
    const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    expect(tools.get('stream_workspace_events')?.annotations).toEqual({
      title: "Stream a workspace's events",
      ...read,
    });
    expect(tools.get('stream_operation_output')?.annotations).toEqual({
      title: "Stream a command's output",
      ...read,
    });
    expect(tools.get('read_computer_file')?.annotations).toEqual({
      title: 'Read a file from a computer',
      ...read,
    });
    expect(tools.get('exec_computer')?.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: false,
    });
  });
});
