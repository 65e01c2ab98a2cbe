import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDefinition } from './tools.js';

/** The three tools of the dynamic mode. */
export const DYNAMIC = {
  list: 'list_api_endpoints',
  describe: 'get_api_endpoint_schema',
  invoke: 'invoke_api_endpoint',
} as const;

/**
 * The dynamic mode's `tools/list`: three tools that discover and call the selected operations, so a
 * client pays for three tools up front and for each operation's schema only when it needs it.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * import { buildTools } from './tools.js';
 * dynamicTools(buildTools(loadDocument()), ['computers']).map((t) => t.name);
 * // ["list_api_endpoints", "get_api_endpoint_schema", "invoke_api_endpoint"]
 */
export function dynamicTools(tools: readonly ToolDefinition[], toolsets: readonly string[]): Tool[] {
  const names = tools.map((tool) => tool.name);
  const name = { type: 'string', enum: names, description: 'The endpoint name, from list_api_endpoints.' };
  return [
    {
      name: DYNAMIC.list,
      title: 'List API endpoints',
      description:
        'Lists the API operations you can call: name, title, toolset, HTTP route and whether it only reads. ' +
        'Then get_api_endpoint_schema for one endpoint’s arguments, and invoke_api_endpoint to call it.',
      inputSchema: {
        type: 'object',
        properties: {
          toolset: {
            type: 'string',
            enum: [...toolsets],
            description: 'Only endpoints of this toolset.',
          },
          search: {
            type: 'string',
            description: 'Only endpoints whose name, title or route contains this text.',
          },
        },
        additionalProperties: false,
      },
      annotations: {
        title: 'List API endpoints',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: DYNAMIC.describe,
      title: 'Describe an API endpoint',
      description:
        'The full definition of one endpoint as a tool: description, input schema (the `arguments` of invoke_api_endpoint), output schema and annotations.',
      inputSchema: { type: 'object', properties: { name }, required: ['name'], additionalProperties: false },
      annotations: {
        title: 'Describe an API endpoint',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: DYNAMIC.invoke,
      title: 'Call an API endpoint',
      description:
        'Calls one endpoint with `arguments` matching its input schema (from get_api_endpoint_schema). The result is that endpoint’s tool result; ' +
        'long-running endpoints wait and report progress as their own tools do. Whether it reads, changes or deletes depends on the endpoint: check its annotations first.',
      inputSchema: {
        type: 'object',
        properties: {
          name,
          arguments: { type: 'object', description: 'The endpoint’s arguments.', default: {} },
        },
        required: ['name'],
        additionalProperties: false,
      },
      annotations: {
        title: 'Call an API endpoint',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
  ];
}

/**
 * The answer of `list_api_endpoints`: the endpoints of `tools` matching the filters.
 *
 * @example
 * listEndpoints(tools, { toolset: 'computers' }).endpoints[0]?.name; // "list_computers"
 */
export function listEndpoints(
  tools: readonly ToolDefinition[],
  filters: { toolset?: string; search?: string },
) {
  const search = filters.search?.toLowerCase();
  return {
    endpoints: tools
      .filter((tool) => !filters.toolset || tool.toolset === filters.toolset)
      .map((tool) => ({
        name: tool.name,
        title: tool.title,
        toolset: tool.toolset,
        route: `${tool.operation.method.toUpperCase()} ${tool.operation.path}`,
        read_only: tool.annotations.readOnlyHint === true,
        destructive: tool.annotations.destructiveHint === true,
        long_running: tool.longRunning,
      }))
      .filter(
        (entry) =>
          !search ||
          entry.name.includes(search) ||
          entry.title.toLowerCase().includes(search) ||
          entry.route.toLowerCase().includes(search),
      ),
  };
}
