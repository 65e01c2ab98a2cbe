import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A real API server with the MCP endpoint mounted at `/mcp` on its origin, and an owner's key file. */
export interface RealServer {
  /** The API base address, ending in `/v1`. */
  baseUrl: string;
  /** `<origin>/mcp`. */
  mcpUrl: string;
  /** A key file (API.md §7) of a principal that may create workspaces: the bootstrap owner's. */
  ownerKeyFile: string;
  close(): Promise<void>;
}

/**
 * The built server entry. Reached by path, not as a dependency: `@svc/server` depends on this package
 * (it mounts `/mcp`), so a dependency back would be a cycle.
 */
const SERVER_MAIN = fileURLToPath(new URL('../../../server/dist/main.js', import.meta.url));

const fromUrl = (baseUrl: string, ownerKeyFile: string, close: () => Promise<void>): RealServer => ({
  baseUrl,
  mcpUrl: new URL('/mcp', baseUrl).href,
  ownerKeyFile,
  close,
});

/** Starts `svc-server --sandbox` (in memory, simulated computers) on a free port; stopped by its pid. */
async function spawnServer(): Promise<RealServer> {
  const keyFile = join(mkdtempSync(join(tmpdir(), 'svc-journey-')), 'bootstrap-key.json');
  const child = spawn(process.execPath, [SERVER_MAIN, '--sandbox'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      SVC_RATE_LIMITS: 'off',
      SVC_SIM_STEP_MS: '50',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const close = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc-server did not start in 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /\(API (http:\S+\/v1)\)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`svc-server exited with ${code}:\n${output}`)));
  }).catch(async (error: Error) => {
    await close();
    throw error;
  });
  return fromUrl(baseUrl, keyFile, close);
}

/**
 * The server to run the journeys against, or why there is none: `SVC_JOURNEY_BASE_URL` +
 * `SVC_JOURNEY_KEY_FILE` (a server already running and its owner key file), else the built
 * `packages/server/dist/main.js` started here in sandbox mode.
 */
export async function realServer(): Promise<RealServer | string> {
  const { SVC_JOURNEY_BASE_URL: baseUrl, SVC_JOURNEY_KEY_FILE: keyFile } = process.env;
  if (baseUrl && keyFile) return fromUrl(baseUrl, keyFile, async () => {});
  if (!existsSync(SERVER_MAIN)) {
    return `no server: set SVC_JOURNEY_BASE_URL + SVC_JOURNEY_KEY_FILE, or build it (pnpm turbo run build --filter=@svc/server)`;
  }
  return spawnServer();
}
