// The real server for the CLI's end-to-end tests: in process (the app from `@svc/server`), or the
// built `svc-server --sandbox` binary as a child process (what an agent's `svc mcp` would talk to).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type App, bootstrap, createApp, listen, loadConfig, setLocalAccount } from '@svc/server';

export interface RunningService {
  /** The API base address, ending in `/v1`. */
  baseUrl: string;
  /** The bootstrap owner service account's key file (mode 0600). */
  keyFilePath: string;
  /** Creates (or resets) a local account for browser sign-in. */
  addAccount(email: string, password: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The app on 127.0.0.1 port 0, in memory, bootstrapped (key file in `dir`). Bound before the app is
 * built, as `svc-server` does, so tokens' `iss`/`aud` and the key file's `base_url` name the real port.
 */
export async function startApp(dir: string): Promise<RunningService> {
  let app: App | undefined;
  const running = await listen((request, env) =>
    app ? app.fetch(request, env) : Promise.resolve(new Response('starting', { status: 503 })),
  );
  const baseUrl = `${running.url}/v1`;
  const loaded = loadConfig({ PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
  const config = { ...loaded, baseUrl, tokenUrl: `${baseUrl}/auth/token` };
  const ready = await createApp({ config, responseValidation: 'throw' });
  app = ready;
  const keyFilePath = join(dir, 'bootstrap-key.json');
  await bootstrap(ready.db, { baseUrl, keyFilePath });
  await ready.start();
  return {
    baseUrl,
    keyFilePath,
    addAccount: async (email, password) => {
      await setLocalAccount(ready.db, { email, password });
    },
    close: async () => {
      await running.close();
      await ready.close();
    },
  };
}

/** The built server entry, reached by path (its `bin`), as an MCP client configuration would. */
const SERVER_MAIN = fileURLToPath(new URL('../../../server/dist/main.js', import.meta.url));

/** Whether {@link spawnSandbox} can run (the server is built). */
export const sandboxBuilt = existsSync(SERVER_MAIN);

/**
 * `svc-server --sandbox` on a free port, its bootstrap key file in a temp dir; the API address is read
 * from its "listening" line. Stopped with SIGTERM by its pid.
 */
export async function spawnSandbox(): Promise<Omit<RunningService, 'addAccount'>> {
  const keyFilePath = join(mkdtempSync(join(tmpdir(), 'svc-cli-sandbox-')), 'bootstrap-key.json');
  const child = spawn(process.execPath, [SERVER_MAIN, '--sandbox'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_BASE_URL: '',
      SVC_BOOTSTRAP_KEY_FILE: keyFilePath,
      SVC_RATE_LIMITS: 'off',
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
  return { baseUrl, keyFilePath, close };
}
