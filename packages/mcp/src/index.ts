export { annotationsFor } from './annotations.js';
export type { CallContext } from './call.js';
export { callTool } from './call.js';
export type { Catalog, ToolMode, ToolSelection } from './catalog.js';
export {
  buildCatalog,
  parseSelection,
  selectTools,
  TOOL_MODES,
  TOOLSETS_ENV,
  ToolSelectionError,
} from './catalog.js';
export { DYNAMIC } from './dynamic.js';
export type { McpHttpOptions } from './http.js';
export { createMcpHttpHandler } from './http.js';
export { headerArgument, toolName } from './names.js';
export type { StdioHandle, StdioOptions } from './run-stdio.js';
export { runStdio } from './run-stdio.js';
export { callScreenTool, SCREEN_ACTIONS, SCREEN_TOOL_NAME, screenTool } from './screen-tool.js';
export type { McpServerOptions } from './server.js';
export { createMcpServer, MCP_SERVER_VERSION } from './server.js';
export { strictSchema } from './strict.js';
export type { ArgumentTarget, ToolDefinition } from './tools.js';
export { buildTools, toolFromOperation } from './tools.js';
export {
  DEFAULT_TOOLSETS,
  FILES_TOOLSET,
  parseToolsets,
  SCREENS_TOOLSET,
  STREAMS_TOOLSET,
  toolsetOf,
} from './toolsets.js';
