import type { KeyFile, SvcClient } from '@svc/client';
import { createClient, readKeyFile } from '@svc/client/node';
import { CliError } from './exit-codes.js';
import type { CliIo } from './io.js';
import { configDir } from './paths.js';
import { readSession, type Session, withSessionLock, writeSession } from './session.js';
import { exchangeToken } from './token-exchange.js';

/** An access token this long from expiry is renewed rather than used. */
const RENEW_BEFORE_MS = 60_000;

/** What every command knows once the global options and the environment are read. */
export interface Context {
  io: CliIo;
  /** `--base-url`, if given. */
  baseUrlOption: string | undefined;
  configDir: string;
  now: () => number;
}

/**
 * The context of one run.
 *
 * @example
 * const context = createContext(io, program.opts().baseUrl);
 */
export function createContext(io: CliIo, baseUrlOption: string | undefined): Context {
  return { io, baseUrlOption, configDir: configDir(io.env, io.homedir), now: io.now ?? Date.now };
}

/**
 * The base address: `--base-url`, else `SVC_BASE_URL`, else the key file's `base_url`, else the
 * stored session's. Throws a usage error when none is known.
 *
 * @example
 * const baseUrl = resolveBaseUrl(context, { keyFile, session });
 */
export function resolveBaseUrl(
  context: Context,
  sources: { keyFile?: KeyFile | undefined; session?: Session | undefined },
): string {
  const found =
    context.baseUrlOption ||
    context.io.env.SVC_BASE_URL ||
    sources.keyFile?.base_url ||
    sources.session?.base_url;
  if (!found)
    throw new CliError(
      'usage',
      'no_base_url',
      'No base address: pass --base-url, set SVC_BASE_URL, or sign in with `svc login --base-url <url>`.',
    );
  return found.replace(/\/+$/, '');
}

/**
 * Refreshes the stored session (grant `refresh_token`): the refresh token is rotated and the new one
 * stored before the access token is returned. Under the session lock; unless `force`, a still-valid
 * access token another process just obtained is returned instead of rotating again.
 *
 * @example
 * const { access_token } = await refreshSession(context, { force: true });
 */
export async function refreshSession(
  context: Context,
  options: { force: boolean },
): Promise<{ access_token: string; session: Session }> {
  return withSessionLock(context.configDir, async () => {
    const session = await readSession(context.configDir);
    if (!session) throw notSignedIn();
    if (
      !options.force &&
      session.access_token &&
      session.expires_at &&
      Date.parse(session.expires_at) - RENEW_BEFORE_MS > context.now()
    ) {
      return { access_token: session.access_token, session };
    }
    const token = await exchangeToken({
      baseUrl: session.base_url,
      credential: session.refresh_token,
      body: { grant_type: 'refresh_token' },
      fetch: context.io.fetch,
    });
    if (!token.refresh_token)
      throw new CliError(
        'authentication',
        'no_refresh_token',
        'The server did not return a new refresh token: run `svc login` again.',
      );
    const next: Session = {
      base_url: session.base_url,
      refresh_token: token.refresh_token,
      access_token: token.access_token,
      expires_at: token.expires_at,
      updated_at: new Date(context.now()).toISOString(),
    };
    await writeSession(context.configDir, next);
    return { access_token: token.access_token, session: next };
  });
}

function notSignedIn(): CliError {
  return new CliError(
    'authentication',
    'not_signed_in',
    'Not signed in: run `svc login`, or set SVC_KEY_FILE to a key file.',
  );
}

/**
 * The API client of a command, authenticated by, in order: `SVC_ACCESS_TOKEN` (used as is),
 * `SVC_KEY_FILE` (assertions exchanged and renewed by `@svc/client`), or the stored session (cached
 * access token, refreshed when it is about to expire or the server refuses it). `anonymous` skips
 * credentials (GET /health); `credential` sends that value as the Bearer (POST /auth/token).
 *
 * @example
 * const client = await apiClient(context);
 * const { identity } = await unwrap(client.GET('/me'));
 */
export async function apiClient(
  context: Context,
  mode: { anonymous?: boolean; credential?: string } = {},
): Promise<SvcClient> {
  const { env } = context.io;
  const fetch = context.io.fetch ? { fetch: context.io.fetch } : {};
  if (mode.anonymous || mode.credential !== undefined) {
    const keyFile = env.SVC_KEY_FILE ? await readKeyFile(env.SVC_KEY_FILE).catch(() => undefined) : undefined;
    const session = await readSession(context.configDir).catch(() => undefined);
    const baseUrl = resolveBaseUrl(context, { keyFile, session });
    return createClient({
      baseUrl,
      ...fetch,
      ...(mode.credential !== undefined ? { token: mode.credential } : {}),
    });
  }
  if (env.SVC_ACCESS_TOKEN) {
    const session = await readSession(context.configDir).catch(() => undefined);
    return createClient({
      baseUrl: resolveBaseUrl(context, { session }),
      token: env.SVC_ACCESS_TOKEN,
      ...fetch,
    });
  }
  if (env.SVC_KEY_FILE) {
    const keyFile = await readKeyFile(env.SVC_KEY_FILE);
    return createClient({ baseUrl: resolveBaseUrl(context, { keyFile }), keyFile, ...fetch });
  }
  const session = await readSession(context.configDir);
  if (!session) throw notSignedIn();
  return createClient({
    baseUrl: resolveBaseUrl(context, { session }),
    getToken: async ({ forceRefresh }) =>
      (await refreshSession(context, { force: forceRefresh })).access_token,
    ...fetch,
  });
}
