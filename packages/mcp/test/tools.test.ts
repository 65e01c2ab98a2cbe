import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { listOperations, loadDocument, operationParameters, operationPolicy } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { annotationsFor } from '../src/annotations.js';
import { toolName } from '../src/names.js';
import { strictSchema } from '../src/strict.js';
import { buildTools } from '../src/tools.js';
import { expectedTools } from './support/spec-tools.js';

const document = loadDocument();
const operations = listOperations(document);
const tools = buildTools(document);
const byName = new Map(tools.map((t) => [t.name, t]));
const ajv = new AjvJsonSchemaValidator();
/** The two operations that do not take an access token: health probes and the token exchange itself. */

describe('toolName', () => {
  it.each([
    ['camelCase', { given: 'listComputers', want: 'list_computers' }],
    ['one word', { given: 'me', want: 'me' }],
    ['three words', { given: 'createServiceAccount', want: 'create_service_account' }],
    ['acronym', { given: 'getHTTPStatus', want: 'get_http_status' }],
  ])('%s', (_, { given, want }) => expect(toolName(given)).toBe(want));
});

describe('buildTools', () => {
  it('has one tool per spec operation but getHealth and exchangeToken, in spec order', () => {
    const want = expectedTools(document).map((t) => t.name);
    expect(tools.map((t) => t.name)).toEqual(want);
    expect(want).toContain('list_computers');
  });

  it('leaves no $ref in any schema it hands to clients', () => {
    expect(JSON.stringify(tools.map((t) => [t.inputSchema, t.outputSchema]))).not.toContain('$ref');
  });

  it('takes every path parameter as a required input', () => {
    for (const tool of tools) {
      const names = [...tool.operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const name of names) expect(tool.inputSchema.required, `${tool.name} ${name}`).toContain(name);
    }
  });

  it('flattens the body and makes Idempotency-Key an optional idempotency_key', () => {
    const tool = byName.get('create_computer');
    // `image` or `snapshot`, exactly one: the server says so (400), the schema requires neither.
    expect(tool?.inputSchema.required).toEqual(['workspace', 'name', 'size']);
    expect(tool?.targets.idempotency_key).toEqual({ in: 'header', name: 'Idempotency-Key' });
    expect(tool?.targets.labels).toEqual({ in: 'body', name: 'labels' });
    expect(tool?.inputSchema.additionalProperties).toBe(false);
  });

  it('gives `wait` to exactly the operations that answer 202', () => {
    const accepted = operations
      .filter((op) => '202' in (op.operation.responses as object))
      .map((op) => toolName(op.operationId));
    expect(tools.filter((t) => t.longRunning).map((t) => t.name)).toEqual(accepted);
    expect(accepted).toEqual([
      'create_computer',
      'delete_computer',
      'start_computer',
      'stop_computer',
      'restart_computer',
      'recover_computer',
      'run_computer',
      'create_snapshot',
    ]);
    // Besides, `wait` is the spec's own query parameter where it declares one (a long poll, exec's wait).
    const declaresWait = (tool: (typeof tools)[number]) =>
      operationParameters(document, tool.operation).some((p) => p.in === 'query' && p.name === 'wait');
    expect(tools.filter((t) => !t.longRunning && declaresWait(t)).map((t) => t.name)).toEqual([
      'get_computer',
      'exec_computer',
      'get_operation',
    ]);
    for (const tool of tools)
      expect('wait' in (tool.inputSchema.properties as object), tool.name).toBe(
        tool.longRunning || declaresWait(tool),
      );
  });

  it('has no output schema exactly when success has no body (204), but for a terminal’s keys (the screen)', () => {
    const withoutBody = tools.filter((t) => !t.outputSchema).map((t) => t.name);
    expect(withoutBody).toEqual(
      tools
        .filter((t) => '204' in (t.operation.operation.responses as object) && t.terminal?.kind !== 'keys')
        .map((t) => t.name),
    );
  });

  it('accepts every success example of the spec as structured output', () => {
    let checked = 0;
    for (const tool of tools) {
      // The screen tool's output is its own (an action and the pointer), not an operation's body.
      if (!tool.outputSchema || tool.screen) continue;
      const validate = ajv.getValidator(tool.outputSchema);
      for (const [status, response] of Object.entries(
        tool.operation.operation.responses as Record<
          string,
          {
            $ref?: string;
            content?: Record<string, { examples?: Record<string, { value?: unknown; $ref?: string }> }>;
          }
        >,
      )) {
        if (response.$ref) continue;
        for (const example of Object.values(response.content?.['application/json']?.examples ?? {})) {
          if (example.$ref) continue;
          const result = validate(example.value);
          expect(result.valid, `${tool.name} ${status}: ${result.errorMessage}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('refuses an error envelope and a body that breaks the spec (the output schema describes success only)', () => {
    const validate = ajv.getValidator(byName.get('get_computer')?.outputSchema ?? {});
    expect(validate({ error: { code: 'not_found' } }).valid).toBe(false);
    expect(validate({ computer: { id: 'x' } }).valid).toBe(false);
  });
});

describe('annotations', () => {
  it.each([
    ['get_computer', { readOnlyHint: true, destructiveHint: false, idempotentHint: true }],
    ['create_computer', { readOnlyHint: false, destructiveHint: false, idempotentHint: false }],
    ['update_computer', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }],
    ['delete_computer', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }],
    ['start_computer', { readOnlyHint: false, destructiveHint: false, idempotentHint: true }],
    ['stop_computer', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }],
    ['restart_computer', { readOnlyHint: false, destructiveHint: true, idempotentHint: false }],
    ['create_snapshot', { readOnlyHint: false, destructiveHint: false, idempotentHint: false }],
    ['list_snapshots', { readOnlyHint: true, destructiveHint: false, idempotentHint: true }],
    ['get_snapshot', { readOnlyHint: true, destructiveHint: false, idempotentHint: true }],
    ['delete_snapshot', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }],
  ])('%s', (name, want) => {
    expect(byName.get(name)?.annotations).toMatchObject({ ...want, openWorldHint: false });
  });

  it('derives every tool’s hints from its method, and gives an unjudged action MCP’s cautious defaults', () => {
    for (const tool of tools) {
      const { method } = tool.operation;
      const a = tool.annotations;
      expect(a.readOnlyHint, tool.name).toBe(method === 'get');
      if (method === 'delete') expect(a.destructiveHint, tool.name).toBe(true);
      expect(a.title, tool.name).toBeTruthy();
      expect(a.openWorldHint, tool.name).toBe(false);
    }
    const stop = operations.find((op) => op.operationId === 'stopComputer');
    if (!stop) throw new Error('stopComputer is gone from the spec');
    const declaring = (operationId: string, policy: Record<string, unknown>) => ({
      ...stop,
      operationId,
      operation: { ...stop.operation, operationId, 'x-svc': policy },
    });
    // A custom action that declares no hints (the linter refuses it) is not taken for a create.
    expect(
      annotationsFor(
        document,
        declaring('hibernateComputer', { permission: 'computers', action: 'hibernate' }),
      ),
    ).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(annotationsFor(document, declaring('createThing', { permission: 'computers' }))).toMatchObject({
      destructiveHint: false,
    });
  });

  it('takes a custom action’s hints from its x-svc.mcp in the spec, as judged there', () => {
    const judged = tools.filter((tool) => operationPolicy(document, tool.operation).mcp);
    expect(judged.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['start_computer', 'stop_computer', 'restart_computer', 'exec_computer']),
    );
    for (const tool of judged) {
      const { mcp } = operationPolicy(document, tool.operation);
      expect(tool.annotations, tool.name).toMatchObject({
        destructiveHint: mcp?.destructive,
        idempotentHint: mcp?.idempotent,
      });
    }
  });

  it('titles every tool with its summary, in the verb of its name when that is not the operation’s', () => {
    for (const tool of tools) {
      expect(tool.annotations.title, tool.name).toBe(tool.title);
      if (tool.name === toolName(tool.operation.operationId)) expect(tool.title).toBe(tool.operation.summary);
    }
    expect(byName.get('read_computer_file')?.title).toBe('Read a file from a computer');
    expect(byName.get('write_computer_file')?.title).toBe('Write a file to a computer');
  });
});

describe('strict schemas (no type arrays, which strict validators warn on)', () => {
  it.each([
    [
      'nullable string',
      { type: ['string', 'null'], maxLength: 5, description: 'd' },
      { description: 'd', anyOf: [{ type: 'string', maxLength: 5 }, { type: 'null' }] },
    ],
    ['single type untouched', { type: 'string', pattern: '^a$' }, { type: 'string', pattern: '^a$' }],
    [
      'nested in properties',
      { type: 'object', properties: { c: { type: ['integer', 'null'], minimum: 1 } } },
      { type: 'object', properties: { c: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] } } },
    ],
  ])('%s', (_, given, want) => expect(strictSchema(given)).toEqual(want));

  it('leaves no type array in any tool schema, and keeps the meaning (null and strings still accepted)', () => {
    const typeArrays = JSON.stringify(tools.map((t) => [t.inputSchema, t.outputSchema])).match(/"type":\[/g);
    expect(typeArrays).toBeNull();
    const validate = ajv.getValidator(byName.get('list_computers')?.outputSchema ?? {});
    expect(validate({ computers: [], next_cursor: null, has_more: false }).valid).toBe(true);
    expect(validate({ computers: [], next_cursor: 'abc', has_more: true }).valid).toBe(true);
    expect(validate({ computers: [], next_cursor: 'a b', has_more: true }).valid).toBe(false);
  });
});
