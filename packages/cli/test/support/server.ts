// The real server for the CLI's end-to-end tests: in process (the app from `@svc/server`), or the
// built `svc-server --sandbox` binary as a child process (what an agent's `svc mcp` would talk to).
import { join } from 'node:path';
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
 * `env` adds settings (`SVC_WEBHOOKS_ALLOW_LOOPBACK`…).
 */
export async function startApp(dir: string, env: Record<string, string> = {}): Promise<RunningService> {
  let app: App | undefined;
  const running = await listen((request, env) =>
    app ? app.fetch(request, env) : Promise.resolve(new Response('starting', { status: 503 })),
  );
  const baseUrl = `${running.url}/v1`;
  const loaded = loadConfig({ ...env, PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
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
