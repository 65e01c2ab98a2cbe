import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** The built `svc` binary. */
export const BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * An MCP client connected to `node dist/main.js mcp` (as an agent's `mcpServers` entry runs it) with
 * exactly `env` plus PATH. `stderr()` is what the process wrote there.
 */
export async function connectSvcMcp(
  env: Record<string, string>,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'svc-cli-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}
