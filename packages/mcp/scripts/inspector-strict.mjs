#!/usr/bin/env node
// The MCP Inspector's strict tool-schema check (`inspector --cli … --method tools/list --strict`) on
// every mode of the built handler, served on 127.0.0.1, port 0. Fails on any warning or error the
// Inspector reports. The Inspector comes from the npm registry at a pinned version through npx.
// Usage: pnpm --filter @svc/mcp inspect:strict   (build first)
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { createMcpHttpHandler } from '../dist/index.js';

const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';
const QUERIES = [
  '',
  '?toolsets=all',
  '?mode=full&toolsets=all',
  '?mode=dynamic&toolsets=all',
  '?toolsets=computers,operations',
];

// No API behind it: tools/list needs none.
const mcp = createMcpHttpHandler({ apiBaseUrl: 'http://127.0.0.1:9/v1' });
const server = createServer(async (req, res) => {
  const body = req.method === 'POST' ? { body: Readable.toWeb(req), duplex: 'half' } : {};
  const response = await mcp(
    new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers,
      ...body,
    }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address();

let failed = false;
for (const query of QUERIES) {
  // Asynchronous: the server answering the Inspector runs in this very process.
  const run = await new Promise((resolve) => {
    execFile(
      'npx',
      [
        '-y',
        INSPECTOR,
        '--cli',
        `http://127.0.0.1:${port}/mcp${query}`,
        '--transport',
        'http',
        '--header',
        'Authorization: Bearer any',
        '--method',
        'tools/list',
        '--strict',
      ],
      { encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ status: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
  const problems = (run.stderr ?? '').split('\n').filter((line) => /^(Warning|Error)\b/.test(line));
  const count = JSON.parse(run.stdout || '{"tools":[]}').tools?.length ?? 0;
  console.log(
    `/mcp${query || ' (compact)'}: exit ${run.status}, ${count} tools, ${problems.length} strict problems`,
  );
  if (run.status !== 0 || problems.length > 0) {
    failed = true;
    console.log(run.stderr);
  }
}
server.close();
process.exitCode = failed ? 1 : 0;
