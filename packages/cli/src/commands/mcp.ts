import type { Command } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';

/**
 * `svc mcp`: the MCP server (every operation of the spec as a tool, from `@svc/mcp`) over stdio,
 * with the same credentials as every other command: `SVC_ACCESS_TOKEN`, `SVC_KEY_FILE`, or the stored
 * browser session (refreshed as it expires). Stdout carries only MCP frames; messages go to stderr.
 * The credential is tried once before serving, so a missing or refused one exits (code 3) at once
 * instead of turning every tool call into an error.
 *
 * @example
 * addMcpCommand(program, () => context);
 */
export function addMcpCommand(program: Command, context: () => Context): void {
  program
    .command('mcp')
    .description(
      'serve every API operation as an MCP tool over stdio (for agents), as SVC_KEY_FILE or the signed-in session',
    )
    .option(
      '--toolsets <sets>',
      'the toolsets to serve, comma-separated (default: the default set an agent working in computers needs; all: every tool; also SVC_MCP_TOOLSETS)',
    )
    .option(
      '--mode <mode>',
      'compact (default), full (whole spec text and output schemas) or dynamic (3 tools)',
    )
    .action(async (options: { toolsets?: string; mode?: string }) => {
      const { runStdio, selectTools, ToolSelectionError } = await import('@svc/mcp'); // the MCP SDK loads only for this command
      let tools: ReturnType<typeof selectTools>;
      try {
        tools = selectTools(options);
      } catch (error) {
        if (error instanceof ToolSelectionError) throw new CliError('usage', 'invalid_option', error.message);
        throw error;
      }
      const ctx = context();
      const client = await apiClient(ctx);
      await client.accessToken();
      // The process's own stdin/stdout (runStdio's default), whatever `io` says: they carry the protocol.
      const { closed } = await runStdio({ client, ...tools });
      ctx.io.stderr.write(`svc mcp: serving ${client.baseUrl} over stdio\n`);
      await closed;
    });
}
