#!/usr/bin/env node
// The stdio entry (`node packages/mcp/dist/stdio.js [--toolsets a,b|all] [--mode compact|full|dynamic]`,
// bin `svc-mcp`; SVC_MCP_TOOLSETS when no --toolsets): a key-file client from the environment
// (SVC_KEY_FILE, optional SVC_BASE_URL),
// served over stdin/stdout. Diagnostics go to stderr only: stdout is the protocol. `svc mcp` does
// the same with the CLI's own session instead.
import { parseArgs } from 'node:util';
import { createClientFromEnv } from '@svc/client/node';
import { selectTools } from './catalog.js';
import { runStdio } from './run-stdio.js';

try {
  const { values } = parseArgs({
    options: { toolsets: { type: 'string' }, mode: { type: 'string' } },
    strict: true,
  });
  const tools = selectTools(values);
  const { closed } = await runStdio({ client: await createClientFromEnv(), ...tools });
  await closed;
} catch (error) {
  const code = (error as { code?: unknown }).code;
  process.stderr.write(`svc-mcp: ${code ? `${String(code)}: ` : ''}${(error as Error).message}\n`);
  process.exitCode = 1;
}
