import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { SvcClient } from '@svc/client';
import { loadDocument, type OpenApiDocument } from '@svc/contract';
import { callTool } from './call.js';
import { buildCatalog, type Catalog, fullListing, type ToolSelection } from './catalog.js';
import { DYNAMIC, listEndpoints } from './dynamic.js';
import { readResource, resourceList } from './resources.js';
import { successResult, textError } from './results.js';
import type { ToolDefinition } from './tools.js';

/** This package's version, sent as the MCP server version (test/version.test.ts keeps it equal to package.json). */
export const MCP_SERVER_VERSION = '0.1.0';

/**
 * Options of {@link createMcpServer}.
 *
 * @example
 * import { createClient } from '@svc/client/retry';
 * const options: McpServerOptions = { client: createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' }) };
 */
export interface McpServerOptions {
  /** Every tool call goes through this client: its auth, Idempotency-Key and retries apply. */
  client: SvcClient;
  /** The bundled spec the tools come from. Default: `loadDocument()` of `@svc/contract`. */
  document?: OpenApiDocument;
  /** The catalog already derived from `document` (the HTTP handler derives it once, not per request). */
  catalog?: Catalog;
  /** Which operations, and how they are offered. Default: the default toolsets, `compact`. */
  selection?: ToolSelection;
  /** Longest a long-running tool waits for its operations before answering "still running". Default 10 min. */
  waitTimeoutMs?: number;
  /** Least time between two polls of one operation. Default: `waitForOperations`' (1 s). */
  minPollIntervalMs?: number;
}

/** Input validators, compiled once per tool with the same validator the SDK's client uses. */
const validatorCache = new WeakMap<
  ToolDefinition,
  (args: unknown) => { valid: boolean; errorMessage?: string }
>();
const ajv = new AjvJsonSchemaValidator();
function validatorOf(tool: ToolDefinition) {
  let validator = validatorCache.get(tool);
  if (!validator) {
    validator = ajv.getValidator<Record<string, unknown>>(tool.inputSchema);
    validatorCache.set(tool, validator);
  }
  return validator;
}

/**
 * An MCP server (the SDK's low-level `Server`, so the spec's JSON Schemas go to clients as they are)
 * with the API's operations as tools, derived from the bundled spec, in the selected mode and
 * toolsets; the shared schemas and the guide as resources. Connect it to any transport.
 *
 * @example
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * import { createClient } from '@svc/client/retry';
 * const server = createMcpServer({ client: createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' }) });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(options: McpServerOptions): Server {
  const catalog = options.catalog ?? buildCatalog(options.document ?? loadDocument());
  const selection = options.selection ?? { mode: 'compact' };
  const document = catalog.document;
  const selected = catalog.selected(selection);
  const callable = new Map(selected.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: 'svc', title: document.info.title, version: MCP_SERVER_VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: catalog.instructions },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalog.list(selection) }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: resourceList(document) }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const contents = readResource(catalog, request.params.uri);
    if (!contents) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${request.params.uri}`);
    return { contents: [contents] };
  });

  const run = async (
    tool: ToolDefinition,
    args: Record<string, unknown>,
    extra: Parameters<Parameters<typeof server.setRequestHandler>[1]>[1],
    progressToken: string | number | undefined,
  ): Promise<CallToolResult> => {
    const checked = validatorOf(tool)(args);
    if (!checked.valid) return textError(`Invalid arguments for ${tool.name}: ${checked.errorMessage}`);
    return callTool(options.client, tool, args, {
      signal: extra.signal,
      waitTimeoutMs: options.waitTimeoutMs ?? 600_000,
      minPollIntervalMs: options.minPollIntervalMs,
      progress:
        progressToken === undefined
          ? undefined
          : (progress, message, total) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, ...(total === undefined ? {} : { total }), message },
              }),
    });
  };

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const progressToken = request.params._meta?.progressToken;
    if (selection.mode !== 'dynamic') {
      const tool = callable.get(name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      return run(tool, args, extra, progressToken);
    }
    const target = typeof args.name === 'string' ? callable.get(args.name) : undefined;
    if (name === DYNAMIC.list) {
      const filters = args as { toolset?: string; search?: string };
      return successResult(listEndpoints(selected, filters));
    }
    if (name !== DYNAMIC.describe && name !== DYNAMIC.invoke)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (!target)
      return textError(`Unknown endpoint ${JSON.stringify(args.name)}: call ${DYNAMIC.list} for the names.`);
    if (name === DYNAMIC.describe) return successResult({ endpoint: fullListing(target) });
    const inner = args.arguments ?? {};
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner))
      return textError('`arguments` must be an object.');
    return run(target, inner as Record<string, unknown>, extra, progressToken);
  });
  return server;
}
