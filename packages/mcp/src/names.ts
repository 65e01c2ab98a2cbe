/**
 * The MCP tool name of an operation: its `operationId` in snake_case. Tool names must match
 * `^[a-zA-Z0-9_.-]{1,128}$` in MCP, which a camelCase operationId always does after this.
 *
 * @example
 * toolName('listComputers'); // "list_computers"
 */
export function toolName(operationId: string): string {
  return operationId
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * The input name of a header parameter: snake_case, like every other field of the API.
 *
 * @example
 * headerArgument('Idempotency-Key'); // "idempotency_key"
 */
export function headerArgument(header: string): string {
  return header.toLowerCase().replaceAll('-', '_');
}
