/** The built server entry (`packages/server/dist/main.js`). */
export declare const SERVER_MAIN: string;
/** Whether the server is built. */
export declare function serverBuilt(): boolean;
/** A running `svc-server` child process. */
export interface ServerProcess {
  /** The API base address, ending in `/v1`. */
  baseUrl: string;
  /** The bootstrap owner service account's key file. */
  keyFilePath: string;
  close(): Promise<void>;
}
/** Starts `svc-server` (by default `--sandbox`) on 127.0.0.1 and a free port; stopped by its pid. */
export declare function spawnServer(options?: {
  args?: string[];
  env?: Record<string, string>;
  /** How long it may take to say it listens (default 60 s; a first start on a busy machine takes longer). */
  startTimeoutMs?: number;
}): Promise<ServerProcess>;
