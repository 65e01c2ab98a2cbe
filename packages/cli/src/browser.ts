import { spawn } from 'node:child_process';

/**
 * The command that opens a URL on this platform, run without a shell (the URL is one argument, so
 * `&` and quotes in it mean nothing): `$BROWSER` when set, `open` on macOS, `rundll32` on Windows
 * (not `cmd /c start`, which would parse the URL), `xdg-open` elsewhere.
 *
 * @example
 * opener('https://x/signin', 'linux', {}); // ['xdg-open', ['https://x/signin']]
 */
export function opener(
  url: string,
  platform: NodeJS.Platform,
  env: Record<string, string | undefined>,
): [string, string[]] {
  if (env.BROWSER) return [env.BROWSER, [url]];
  if (platform === 'darwin') return ['open', [url]];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

/**
 * Opens `url` in the user's browser; rejects when no opener could be started (the caller has printed
 * the URL anyway).
 *
 * @example
 * await openBrowser('https://api.example/signin/authorize?…').catch(() => {});
 */
export function openBrowser(
  url: string,
  env: Record<string, string | undefined> = process.env,
): Promise<void> {
  const [command, args] = opener(url, process.platform, env);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true, shell: false });
    child.once('error', reject);
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}
