// The size of `tools/list` in each mode, measured through the official SDK client over HTTP, with a
// budget per mode; and that the compact and dynamic modes lose no meaning against the full one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { byteRequestBody, byteResponse, eventStream, listOperations, loadDocument } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMcpHttpHandler } from '../src/http.js';
import { impliedBounds } from '../src/pattern-length.js';
import { serve } from './support/serve.js';
import { defaultTools, expectedTools, NOT_TOOLS } from './support/spec-tools.js';
import { recordResults } from './support/wire-results.js';

/**
 * Bytes of `tools/list` (the JSON of its result, as sent) a mode may use, with the default toolsets
 * (no option) and with `toolsets=all`. History of the whole set: the full mode inlines every
 * schema: `Operation.result` (a command's execution, design §13) is inlined in the output of each
 * long-running tool (and `run_computer` came with it), which took it from about 184,500 bytes to 216,000.
 * The two stream tools (`stream_operation_output`, `stream_workspace_events`: the spec's descriptions of
 * the streams: 224,009 and 43,106 bytes as plain GETs; then a read window's inputs, limits and output)
 * took full to 226,697 bytes (with the server branch's ErrorDetails) and compact to 44,494. Files on
 * computers (five tools: stat, list and delete as every JSON operation, `read_computer_file` and
 * `write_computer_file` for the byte ones, with the spec's path, permission and audit text and the
 * tools' own limits) took full to 255,413 and compact to 52,125.
 * Lifetimes and recovery: `recover_computer` (a long-running tool: 17,786 bytes full, 2,045 compact),
 * and `Computer.lifetime`, `Operation.trigger` and `Workspace.lifetime_defaults` in every output that
 * carries them (about 19,000 full, 2,700 compact) took full to 263,491 bytes and compact to 49,226.
 * Both together: full 293,092 bytes, compact 56,857.
 * Webhooks: twelve tools for the endpoints and their deliveries (manage them, rotate a secret, send a
 * sample, read attempts) took full to 365,901 bytes, compact to 70,233 (53 tools; `toolsets=` narrows
 * a client to the groups it needs), and dynamic's catalogue of groups to 4,253.
 * Snapshots: four tools (`create_snapshot` long-running, list, get, delete), `Computer.snapshot_id`
 * and create_computer's `snapshot`, and `computer.snapshot` in every operation's type took full to
 * 399,493 bytes, compact to 75,575 (57 tools, with `list_images` pointing at them) and dynamic to 4,401.
 * The fleet: `unknown` and `moving` among the computer states, `drain` among the triggers, and
 * `reason` and `resource` among the error details (a create that finds no room) in every output that
 * carries them took full to 404,931 bytes and compact to 76,157.
 * Toolsets with a default (an agent's list fits again): no option lists the default toolsets, 23
 * tools: compact 38,785 (76,157 with `toolsets=all`), full 233,250 (404,931), dynamic 2,934 (4,408).
 * Compact output schemas without the spec's prose about each result field (the same sentences on
 * every long-running tool; in the full mode and the resources) and shorter file-tool notes: compact
 * 36,350 (72,386 all), full 233,074 (404,755). Every hint stated and `annotations.title` in compact
 * too, as in full, and the file tools titled by their verb: compact 38,168 (76,818 all), full
 * 233,064 (404,745).
 * Screens and input (the `screens` toolset, not in the default: `input_computer`; the picture has no
 * tool yet), `display` on images, `screen` on create_computer and `no_display` among the error
 * details: compact 38,790 (82,494 all), full 236,417 (416,466).
 * The screen tool (`use_computer_screen`: the computer-use actions, a screenshot as image content),
 * in `screens`, so the default is unchanged: compact 85,179 all, full 420,771 all.
 * Terminals: seven tools in their own toolset, `terminals`, outside the default (open, list, get,
 * resize, close, stream the output, read the screen; the input, bytes, has no tool yet), and two
 * quotas among the error details took `toolsets=all` to 441,009 bytes full, 88,039 compact (64 tools)
 * and dynamic to 4,686; the default stays at 38,058 compact.
 * The terminal's input as a tool that takes keys as text and answers the screen (its own output
 * schema, the key names in its input's description): toolsets=all 90,647 compact, 446,884 full, 4,874
 * dynamic; the default unchanged.
 * Both together, with the terminal's keys tool (`send_computer_terminal_input`): the default 38,493
 * compact and 238,316 full; `toolsets=all` 67 tools, 99,892 compact, 462,770 full, 4,962 dynamic.
 * The 40,000 of the default is the issue's ("A new user's first hour", item 6), not a measurement.
 */
const BUDGET = {
  default: { compact: 40_000, full: 239_000, dynamic: 3_200 },
  all: { compact: 101_000, full: 464_000, dynamic: 5_100 },
} as const;

const document = loadDocument();
const specTools = expectedTools(document);
const toolsets = [...new Set(specTools.map((t) => t.toolset))];
const defaults = defaultTools(document);

/** The constraints of a schema: the same JSON Schema without its annotations. */
function constraints(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(constraints);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      // Annotations, and the spec's vendor extensions (said once in the instructions), are not constraints.
      .filter(
        ([key]) =>
          key !== 'description' &&
          key !== 'examples' &&
          key !== 'title' &&
          key !== 'format' &&
          !key.startsWith('x-'),
      )
      .map(([key, value]) => [key, constraints(value)]),
  );
}

/** The schema without the `minLength`/`maxLength` its `pattern` already enforces. */
function withoutImpliedBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutImpliedBounds);
  if (typeof schema !== 'object' || schema === null) return schema;
  const implied = new Set<string>(impliedBounds(schema as Record<string, unknown>));
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => !implied.has(key))
      .map(([key, value]) => [key, withoutImpliedBounds(value)]),
  );
}

describe('tool modes over streamable HTTP (official SDK client)', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  const clients: Client[] = [];
  const results = new WeakMap<Client, ReturnType<typeof recordResults>>();
  const connect = async (query = '') => {
    const client = new Client({ name: 'modes-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), {
      requestInit: { headers: { Authorization: 'Bearer any-token-the-mock-accepts' } },
    });
    await client.connect(transport);
    results.set(client, recordResults(transport));
    clients.push(client);
    return client;
  };
  /** The tools of `tools/list` and the bytes of its result as it came off the wire. */
  const listed = async (query = '') => {
    const client = await connect(query);
    const { tools } = await client.listTools();
    const bytes = results.get(client)?.at(-1)?.bytes ?? Number.NaN;
    return { client, tools, bytes };
  };

  beforeAll(async () => {
    const mcp = createMcpHttpHandler({ apiBaseUrl: inject('prismUrl'), minPollIntervalMs: 10 });
    server = await serve(mcp);
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
  });

  it.each([
    ['compact (no option)', '', BUDGET.default.compact, defaults.length],
    ['full', '?mode=full', BUDGET.default.full, defaults.length],
    ['dynamic', '?mode=dynamic', BUDGET.default.dynamic, 3],
    ['compact, toolsets=all', '?toolsets=all', BUDGET.all.compact, specTools.length],
    ['full, toolsets=all', '?mode=full&toolsets=all', BUDGET.all.full, specTools.length],
    ['dynamic, toolsets=all', '?mode=dynamic&toolsets=all', BUDGET.all.dynamic, 3],
  ])('%s: tools/list fits its budget', async (mode, query, budget, count) => {
    const { tools, bytes } = await listed(query);
    console.info(
      `tools/list ${mode}: ${tools.length} tools, ${bytes} bytes (~${Math.round(bytes / 4)} tokens)`,
    );
    expect(tools).toHaveLength(count);
    expect(bytes).toBeLessThanOrEqual(budget);
  });

  it('with no option lists the default toolsets: every tool an agent working in computers needs', async () => {
    const { tools } = await listed();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(defaults.map((t) => t.name));
    expect(names).toEqual(
      expect.arrayContaining([
        'get_me',
        ...['list', 'create', 'get', 'start', 'stop', 'delete'].map(
          (verb) => `${verb}_computer${verb === 'list' ? 's' : ''}`,
        ),
        'exec_computer',
        'run_computer',
        ...['read', 'write', 'get', 'delete'].map((verb) => `${verb}_computer_file`),
        'list_computer_files',
        'get_operation',
        'list_operations',
        'stream_workspace_events',
        'stream_operation_output',
        'list_sizes',
        'list_images',
      ]),
    );
    // Waiting for an operation is get_operation's `wait`.
    expect(tools.find((t) => t.name === 'get_operation')?.inputSchema.properties).toHaveProperty('wait');
  });

  it('the full set is one option away: toolsets=all has a tool for every operation that can have one', async () => {
    const { tools } = await listed('?toolsets=all');
    expect(tools.map((t) => t.name)).toEqual(specTools.map((t) => t.name));
    // Every operation is a tool, or one of those that cannot be: no access token, or a tar archive's
    // bytes, or a stream of pictures, the live screen, for people (a terminal's input is a tool that
    // takes keys as text; a screen's picture is `use_computer_screen`'s screenshot, as MCP image content).
    const covered = new Set(specTools.map((t) => t.operationId));
    const left = listOperations(document)
      .filter((op) => !covered.has(op.operationId))
      .map((op) => op.operationId);
    const tar = listOperations(document)
      .filter((op) =>
        ['application/x-tar'].includes(
          (byteResponse(document, op) ?? byteRequestBody(document, op))?.mediaType ?? '',
        ),
      )
      .map((op) => op.operationId);
    const pictures = listOperations(document)
      .filter((op) =>
        JSON.stringify(eventStream(document, op)?.events ?? []).includes('"dataSchema":"ScreenFrame"'),
      )
      .map((op) => op.operationId);
    expect(pictures).toEqual(['streamComputerScreenFrames']);
    expect(left.sort()).toEqual([...NOT_TOOLS, ...tar, ...pictures].sort());
    // `default` keeps the default set beside the toolsets named.
    const more = await listed('?toolsets=default,webhooks');
    expect(more.tools.map((t) => t.name)).toEqual(
      specTools
        .filter((t) => t.toolset === 'webhooks' || defaults.some((d) => d.name === t.name))
        .map((t) => t.name),
    );
  });

  it.each(toolsets)('toolset %s lists exactly its operations', async (toolset) => {
    const { tools, bytes } = await listed(`?toolsets=${toolset}`);
    console.info(`tools/list compact, toolsets=${toolset}: ${tools.length} tools, ${bytes} bytes`);
    expect(tools.map((t) => t.name)).toEqual(
      specTools.filter((t) => t.toolset === toolset).map((t) => t.name),
    );
  });

  it('combines toolsets, and refuses an unknown one with 400 invalid_argument naming the known ones', async () => {
    const { tools } = await listed('?toolsets=computers,operations');
    expect(tools.map((t) => t.name)).toEqual(
      specTools.filter((t) => t.toolset === 'computers' || t.toolset === 'operations').map((t) => t.name),
    );
    const response = await fetch(`${server.url}/mcp?toolsets=computers,nope`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer x',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      error: { code: string; details: { field_violations: { field: string; description: string }[] } };
    };
    expect(body.error.code).toBe('invalid_argument');
    expect(body.error.details.field_violations).toEqual([
      { field: 'toolsets', description: expect.stringContaining('unknown toolset nope; known: identity') },
    ]);
    const described = body.error.details.field_violations[0]?.description ?? '';
    for (const toolset of toolsets) expect(described).toContain(toolset);
    expect(described).toMatch(/or all, default$/);
  });

  it('compact keeps every tool’s title, annotations and input constraints of the full mode', async () => {
    const compact = (await listed('?toolsets=all')).tools;
    const full = new Map((await listed('?mode=full&toolsets=all')).tools.map((t) => [t.name, t]));
    expect(compact).toHaveLength(specTools.length);
    for (const tool of compact) {
      const whole = full.get(tool.name) as Tool;
      expect(tool.title, tool.name).toBe(whole.title);
      // Every hint stated in both modes (test/annotations.test.ts says which).
      expect(tool.annotations, tool.name).toEqual(whole.annotations);
      // Less only the length bounds a `pattern` already enforces (test/pattern-length.test.ts).
      expect(constraints(tool.inputSchema), tool.name).toEqual(
        constraints(withoutImpliedBounds(whole.inputSchema)),
      );
      expect(Boolean(tool.outputSchema), tool.name).toBe(Boolean(whole.outputSchema));
    }
  });

  it('states what compact leaves out once: cited notes and cut parameter texts are in the instructions', async () => {
    const { client, tools } = await listed('?toolsets=all');
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toContain('Enums in results may gain values');
    const full = new Map((await listed('?mode=full&toolsets=all')).tools.map((t) => [t.name, t]));
    const fold = (text: string) => text.replace(/\s+/g, ' ').trim();
    for (const tool of tools) {
      for (const [note] of (tool.description ?? '').matchAll(/\[N\d+\]/g))
        expect(instructions, `${tool.name} cites ${note}`).toContain(`${note} `);
      // Every sentence of the full description is in the tool's or in the instructions.
      const described = (full.get(tool.name)?.description ?? '').split('\n\nAPI: ')[0] ?? '';
      // It starts with the operation's summary (the title, or the title's source for a renamed tool).
      const whole = fold(described.slice(described.indexOf('\n\n') + 2));
      const sentences = whole.split(/(?<=[.!?])\s+(?=[A-Z`(*])/);
      for (const sentence of sentences)
        expect(
          fold(tool.description ?? '').includes(sentence) || instructions.includes(sentence),
          `${tool.name}: ${sentence}`,
        ).toBe(true);
    }
    for (const tool of tools) {
      const whole = full.get(tool.name)?.inputSchema.properties ?? {};
      for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        const cut = (schema as { description?: string }).description;
        const text = fold((whole[name] as { description?: string }).description ?? '');
        // Cut to a sentence, or left out (a parameter most tools take): in full in the instructions.
        if (text !== '' && (cut === undefined || fold(cut) !== text))
          expect(instructions, `${tool.name}.${name}`).toContain(text);
      }
    }
    expect(instructions).toMatch(/Errors: a refused call is a result with isError/);
    // The toolsets, the default and how to get the others, for the model that finds a tool missing.
    expect(instructions).toContain(
      'Listed unless the client chose others: identity, computers, files, operations, streams, catalog.',
    );
    expect(instructions).toContain('`?toolsets=all`');
    expect(instructions).toContain('`permission_denied`');
  });

  it.each([
    ['compact', '?toolsets=all'],
    ['full', '?mode=full&toolsets=all'],
    ['dynamic', '?mode=dynamic&toolsets=all'],
  ])(
    '%s: no type arrays and no property that accepts anything (the Inspector’s strict rules)',
    async (_, query) => {
      const { tools } = await listed(query);
      const problems: string[] = [];
      const walk = (schema: unknown, path: string): void => {
        if (typeof schema !== 'object' || schema === null) return;
        const node = schema as Record<string, unknown>;
        if (Array.isArray(node.type)) problems.push(`${path}: type array`);
        for (const [name, value] of Object.entries(
          (node.properties ?? {}) as Record<string, Record<string, unknown>>,
        )) {
          if (!['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const'].some((k) => k in value))
            problems.push(`${path}.${name}: accepts anything`);
        }
        for (const [key, value] of Object.entries(node))
          if (Array.isArray(value)) {
            for (const [i, item] of value.entries()) walk(item, `${path}.${key}[${i}]`);
          } else walk(value, `${path}.${key}`);
      };
      for (const tool of tools) {
        walk(tool.inputSchema, `${tool.name}.inputSchema`);
        walk(tool.outputSchema, `${tool.name}.outputSchema`);
      }
      expect(problems).toEqual([]);
    },
  );

  it('names shared output schemas by title, each one a readable resource', async () => {
    const { client, tools } = await listed('?toolsets=all');
    const titles = new Set<string>();
    const walk = (schema: unknown): void => {
      if (typeof schema !== 'object' || schema === null) return;
      const { title, ...rest } = schema as Record<string, unknown>;
      if (typeof title === 'string') titles.add(title);
      for (const value of Object.values(rest)) walk(value);
    };
    for (const tool of tools) walk(tool.outputSchema);
    expect(titles).toContain('Computer');
    for (const title of titles) {
      const { contents } = await client.readResource({ uri: `svc://schemas/${title}` });
      const schema = JSON.parse((contents[0] as { text: string }).text);
      expect(schema, title).toBeTypeOf('object');
      expect(JSON.stringify(schema)).not.toContain('$ref');
    }
    const guide = await client.readResource({ uri: 'svc://guide' });
    expect((guide.contents[0] as { text: string }).text).toBe(client.getInstructions());
  });

  it('compact: a call’s structured result passes the client’s output-schema validation', async () => {
    const client = await connect();
    await client.listTools(); // the SDK client validates structuredContent against the listed outputSchema
    const result = await client.callTool({ name: 'get_me', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toHaveProperty('identity');
  });

  it('dynamic: lists, describes and calls an operation, with progress for a long-running one', async () => {
    const client = await connect('?mode=dynamic&toolsets=computers,operations');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'list_api_endpoints',
      'get_api_endpoint_schema',
      'invoke_api_endpoint',
    ]);

    const listedEndpoints = await client.callTool({
      name: 'list_api_endpoints',
      arguments: { search: 'stop' },
    });
    expect(listedEndpoints.structuredContent).toEqual({
      endpoints: [
        {
          name: 'stop_computer',
          title: 'Stop a computer',
          toolset: 'computers',
          route: 'POST /workspaces/{workspace}/computers/{computer}/stop',
          read_only: false,
          destructive: true,
          long_running: true,
        },
      ],
    });
    const described = await client.callTool({
      name: 'get_api_endpoint_schema',
      arguments: { name: 'get_computer' },
    });
    const endpoint = (described.structuredContent as { endpoint: Tool }).endpoint;
    expect(endpoint.inputSchema.required).toEqual(['workspace', 'computer']);
    expect(endpoint.annotations).toMatchObject({ readOnlyHint: true });

    const progress: number[] = [];
    const invoked = await client.callTool(
      {
        name: 'invoke_api_endpoint',
        arguments: { name: 'stop_computer', arguments: { workspace: 'dev', computer: 'box' } },
      },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(invoked.isError, JSON.stringify(invoked.content)).toBeFalsy();
    expect(invoked.structuredContent).toHaveProperty('operations');

    const outside = await client.callTool({ name: 'invoke_api_endpoint', arguments: { name: 'get_me' } });
    expect(outside.isError).toBe(true);
    expect((outside.content as { text: string }[])[0]?.text).toMatch(/^Unknown endpoint "get_me"/);
    const bad = await client.callTool({
      name: 'invoke_api_endpoint',
      arguments: { name: 'get_computer', arguments: { workspace: 'dev' } },
    });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]?.text).toMatch(/^Invalid arguments for get_computer/);
  });
});
