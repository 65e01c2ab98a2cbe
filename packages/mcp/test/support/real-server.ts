import { serverBuilt, spawnServer } from '@svc/tools/server-process';

/** A real API server with the MCP endpoint mounted at `/mcp` on its origin, and an owner's key file. */
export interface RealServer {
  /** The API base address, ending in `/v1`. */
  baseUrl: string;
  /** `<origin>/mcp`. */
  mcpUrl: string;
  /** A key file (design §7) of a principal that may create workspaces: the bootstrap owner's. */
  ownerKeyFile: string;
  close(): Promise<void>;
}

const fromUrl = (baseUrl: string, ownerKeyFile: string, close: () => Promise<void>): RealServer => ({
  baseUrl,
  mcpUrl: new URL('/mcp', baseUrl).href,
  ownerKeyFile,
  close,
});

/**
 * The server to run the journeys against, or why there is none: `SVC_JOURNEY_BASE_URL` +
 * `SVC_JOURNEY_KEY_FILE` (a server already running and its owner key file), else the built
 * `packages/server/dist/main.js` started here in sandbox mode.
 */
export async function realServer(): Promise<RealServer | string> {
  const { SVC_JOURNEY_BASE_URL: baseUrl, SVC_JOURNEY_KEY_FILE: keyFile } = process.env;
  if (baseUrl && keyFile) return fromUrl(baseUrl, keyFile, async () => {});
  if (!serverBuilt()) {
    return `no server: set SVC_JOURNEY_BASE_URL + SVC_JOURNEY_KEY_FILE, or build it (pnpm turbo run build --filter=@svc/server)`;
  }
  const server = await spawnServer({ env: { SVC_SIM_STEP_MS: '50' } });
  return fromUrl(server.baseUrl, server.keyFilePath, server.close);
}
