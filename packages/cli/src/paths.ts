import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The directory of `svc`'s own files (the session): `SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/svc`,
 * else `~/.config/svc`.
 *
 * @example
 * configDir({ XDG_CONFIG_HOME: '/home/ada/.config' }); // '/home/ada/.config/svc'
 */
export function configDir(env: Record<string, string | undefined>, home: string = homedir()): string {
  if (env.SVC_CONFIG_DIR) return env.SVC_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'svc');
  return join(home, '.config', 'svc');
}

/**
 * The origin-relative sign-in address for a base address: `/signin/authorize` beside the `/v1` prefix.
 *
 * @example
 * signinUrl('https://api.example/v1'); // 'https://api.example/signin/authorize'
 */
export function signinUrl(baseUrl: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/signin/authorize`);
}
