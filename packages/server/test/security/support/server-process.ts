// One real server process (dist/main.js) on 127.0.0.1 and PORT=0, for the suites that need a socket,
// the process's own umask, or its exit status.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { childEnv, stopChild } from '@svc/tools/child-process';

const MAIN = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));

/** A started (or failed) server process. */
export interface ServerProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` once it listens. */
  origin: string | undefined;
  output(): string;
  /** The exit status when it stopped before listening. */
  exitCode: number | null;
  stop(): Promise<void>;
}

/**
 * Starts `dist/main.js` with `env` (rate limits off unless `env` says otherwise) and waits until it
 * listens or exits. `umask000` runs it under `umask 000`, the most permissive a user could set.
 */
export async function startServer(
  env: Record<string, string>,
  options: { umask000?: boolean } = {},
): Promise<ServerProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build the server first`);
  let output = '';
  const fullEnv = childEnv({ HOST: '127.0.0.1', PORT: '0', SVC_RATE_LIMITS: 'off', ...env });
  const child = options.umask000
    ? spawn('/bin/sh', ['-c', 'umask 000 && exec "$0" "$1"', process.execPath, MAIN], {
        env: fullEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [MAIN], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 60_000;
  let match: RegExpExecArray | null = null;
  while (child.exitCode === null && Date.now() < deadline) {
    match = /svc-server listening on (http:\/\/\S+)/.exec(output);
    if (match) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const stop = () => stopChild(child);
  if (!match && child.exitCode === null) {
    await stop();
    throw new Error(`server did not start within 60 s:\n${output}`);
  }
  return { child, origin: match?.[1], output: () => output, exitCode: child.exitCode, stop };
}
