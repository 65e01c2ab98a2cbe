import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { SvcClient } from '@svc/client';
import { loadDocument, type OpenApiDocument } from '@svc/contract';
import { callTool } from './call.js';
import { textError } from './results.js';
import { buildTools, type ToolDefinition } from './tools.js';

/** This package's version, sent as the MCP server version. */
export const MCP_SERVER_VERSION = '0.1.0';

/**
 * Options of {@link createMcpServer}.
 *
 * @example
 * import { createClient } from '@svc/client';
 * const options: McpServerOptions = { client: createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' }) };
 */
export interface McpServerOptions {
  /** Every tool call goes through this client: its auth, Idempotency-Key and retries apply. */
  client: SvcClient;
  /** The bundled spec the tools come from. Default: `loadDocument()` of `@svc/contract`. */
  document?: OpenApiDocument;
  /** Tools already derived from `document` (the HTTP handler derives them once, not per request). */
  tools?: readonly ToolDefinition[];
  /** Longest a long-running tool waits for its operations before answering "still running". Default 10 min. */
  waitTimeoutMs?: number;
  /** Least time between two polls of one operation. Default: `waitForOperations`' (1 s). */
  minPollIntervalMs?: number;
}

/** Compiles each tool's input schema once, with the same validator the SDK's client uses. */
function inputValidators(tools: readonly ToolDefinition[]) {
  const ajv = new AjvJsonSchemaValidator();
  return new Map(
    tools.map((tool) => [tool.name, ajv.getValidator<Record<string, unknown>>(tool.inputSchema)]),
  );
}

/** The `tools/list` entry of a tool: what MCP clients see. */
function listing(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    annotations: tool.annotations,
  };
}

/**
 * An MCP server (the SDK's low-level `Server`, so the spec's JSON Schemas go to clients as they are)
 * with one tool per API operation, derived from the bundled spec. Connect it to any transport.
 *
 * @example
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * import { createClient } from '@svc/client';
 * const server = createMcpServer({ client: createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' }) });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(options: McpServerOptions): Server {
  const document = options.document ?? loadDocument();
  const tools = options.tools ?? buildTools(document);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const validators = inputValidators(tools);
  const server = new Server(
    { name: 'svc', title: document.info.title, version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        `Tools for the ${document.info.title} ${document.info.version}: one per API operation, named after its operationId. ` +
        'Resources are addressed by id or name; errors carry a code and a request_id to quote.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(listing) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const args = request.params.arguments ?? {};
    const checked = validators.get(tool.name)?.(args);
    if (checked && !checked.valid)
      return textError(`Invalid arguments for ${tool.name}: ${checked.errorMessage}`);
    const progressToken = request.params._meta?.progressToken;
    return callTool(options.client, tool, args, {
      signal: extra.signal,
      waitTimeoutMs: options.waitTimeoutMs ?? 600_000,
      minPollIntervalMs: options.minPollIntervalMs,
      progress:
        progressToken === undefined
          ? undefined
          : (progress, message) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, total: 100, message },
              }),
    });
  });
  return server;
}
