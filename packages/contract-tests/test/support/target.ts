import { inject } from 'vitest';

/** Where the suite runs: `CONTRACT_TARGET=mock` (default; Prism from the bundle) or `server`. */
export type Target = 'mock' | 'server';

function readTarget(): Target {
  const value = process.env.CONTRACT_TARGET ?? 'mock';
  if (value !== 'mock' && value !== 'server')
    throw new Error(`CONTRACT_TARGET must be mock or server, not ${value}`);
  return value;
}

export const TARGET: Target = readTarget();
export const onMock = TARGET === 'mock';

/**
 * The base URL: CONTRACT_BASE_URL, else what the global setup started (the mock's Prism, or for a
 * server the gateway in front of `prism proxy`, ending in /v1).
 */
export function baseUrl(): string {
  const url = process.env.CONTRACT_BASE_URL || inject('contractBaseUrl');
  if (!url) throw new Error('CONTRACT_TARGET=server needs CONTRACT_BASE_URL (e.g. http://127.0.0.1:8080/v1)');
  return url.replace(/\/+$/, '');
}

/** The server's key file: CONTRACT_KEY_FILE, else the bootstrap key file of the server the global setup started. */
export function keyFilePath(): string | undefined {
  return process.env.CONTRACT_KEY_FILE || inject('contractKeyFile') || undefined;
}

declare module 'vitest' {
  export interface ProvidedContext {
    contractBaseUrl: string;
    contractKeyFile: string;
  }
}
