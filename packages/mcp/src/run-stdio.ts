import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createClient, type GetToken, type SvcClient } from '@svc/client/retry';
import { createMcpServer, type McpServerOptions } from './server.js';

/**
 * Options of {@link runStdio}: a ready client, or a base URL with a `getToken` hook (the CLI's stored
 * browser session: it is called before each request, with `forceRefresh: true` once after a 401).
 *
 * @example
 * const options: StdioOptions = { baseUrl: 'http://127.0.0.1:8080/v1', getToken: async () => 'ey...' };
 */
export type StdioOptions = Omit<McpServerOptions, 'client'> &
  (
    | { client: SvcClient }
    | { baseUrl: string; getToken: GetToken; fetch?: (request: Request) => Promise<Response> }
  ) & {
    /** Default `process.stdin` / `process.stdout`; stdout carries the protocol, so log to stderr only. */
    stdin?: Readable;
    stdout?: Writable;
  };

/** A running stdio server. */
export interface StdioHandle {
  server: Server;
  /** Resolves when the transport closes: stdin ended, or {@link StdioHandle.close} was called. */
  closed: Promise<void>;
  /** Closes the transport; tool calls still running are aborted. */
  close(): Promise<void>;
}

/**
 * Serves the MCP tools over stdio (newline-delimited JSON-RPC on stdin/stdout) until stdin ends.
 * `svc mcp` calls this with the CLI's client; `node packages/mcp/dist/stdio.js` with a key-file client.
 *
 * @example
 * import { createClientFromEnv } from '@svc/client/node';
 * const { closed } = await runStdio({ client: await createClientFromEnv() });
 * await closed;
 */
export async function runStdio(options: StdioOptions): Promise<StdioHandle> {
  const client =
    'client' in options
      ? options.client
      : createClient({
          baseUrl: options.baseUrl,
          getToken: options.getToken,
          ...(options.fetch ? { fetch: options.fetch } : {}),
        });
  const server = createMcpServer({ ...options, client });
  const stdin = options.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  // The SDK's transport does not notice the end of stdin; without this an agent that hangs up would
  // leave waits running for up to their timeout.
  const onEnd = () => void server.close();
  stdin.once('end', onEnd);
  void closed.then(() => stdin.off('end', onEnd));
  await server.connect(transport);
  return { server, closed, close: () => server.close() };
}
