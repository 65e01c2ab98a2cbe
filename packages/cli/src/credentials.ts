import type { KeyFile, SvcClient } from '@svc/client';
import { CliError } from './exit-codes.js';
import type { CliIo } from './io.js';
import { configDir } from './paths.js';
import { type Profile, readProfiles, selectProfile } from './profiles.js';
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
  /** The profile of this run (`--profile`, `SVC_PROFILE`, `svc config use`, or `default`). */
  profile: string;
  /** Its stored settings (empty when it was never configured). */
  settings: Profile;
  /** The key file to use: `SVC_KEY_FILE`, else the profile's. */
  keyFilePath: string | undefined;
  now: () => number;
}

/**
 * The context of one run.
 *
 * @example
 * const context = createContext(io, { baseUrl: program.opts().baseUrl, profile: program.opts().profile });
 */
export function createContext(
  io: CliIo,
  options: { baseUrl?: string | undefined; profile?: string | undefined } = {},
): Context {
  const dir = configDir(io.env, io.homedir);
  const config = readProfiles(dir);
  const profile = selectProfile(options.profile, io.env, config);
  const settings = config.profiles[profile] ?? {};
  return {
    io,
    baseUrlOption: options.baseUrl,
    configDir: dir,
    profile,
    settings,
    keyFilePath: io.env.SVC_KEY_FILE || settings.key_file,
    now: io.now ?? Date.now,
  };
}

/**
 * The base address: `--base-url`, else `SVC_BASE_URL`, else the profile's, else the key file's
 * `base_url`, else the stored session's. Throws a usage error when none is known.
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
    context.settings.base_url ||
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
  return withSessionLock(
    context.configDir,
    async () => {
      const session = await readSession(context.configDir, context.profile);
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
      await writeSession(context.configDir, next, context.profile);
      return { access_token: token.access_token, session: next };
    },
    undefined,
    context.profile,
  );
}

function notSignedIn(): CliError {
  return new CliError(
    'authentication',
    'not_signed_in',
    'Not signed in: run `svc login`, set SVC_KEY_FILE to a key file, or choose a profile (`svc config use <name>`).',
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
  // Loaded here, not at start-up: `svc --help` never pays for the client.
  // The node entry: its createClient takes a key file (jose signs the assertions).
  const { createClient, readKeyFile } = await import('@svc/client/node');
  const { env } = context.io;
  const fetch = context.io.fetch ? { fetch: context.io.fetch } : {};
  if (mode.anonymous || mode.credential !== undefined) {
    const keyFile = context.keyFilePath
      ? await readKeyFile(context.keyFilePath).catch(() => undefined)
      : undefined;
    const session = await readSession(context.configDir, context.profile).catch(() => undefined);
    const baseUrl = resolveBaseUrl(context, { keyFile, session });
    return createClient({
      baseUrl,
      ...fetch,
      ...(mode.credential !== undefined ? { token: mode.credential } : {}),
    });
  }
  if (env.SVC_ACCESS_TOKEN) {
    const session = await readSession(context.configDir, context.profile).catch(() => undefined);
    return createClient({
      baseUrl: resolveBaseUrl(context, { session }),
      token: env.SVC_ACCESS_TOKEN,
      ...fetch,
    });
  }
  if (context.keyFilePath) {
    const keyFile = await readKeyFile(context.keyFilePath);
    return createClient({ baseUrl: resolveBaseUrl(context, { keyFile }), keyFile, ...fetch });
  }
  const session = await readSession(context.configDir, context.profile);
  if (!session) throw notSignedIn();
  return createClient({
    baseUrl: resolveBaseUrl(context, { session }),
    getToken: async ({ forceRefresh }) =>
      (await refreshSession(context, { force: forceRefresh })).access_token,
    ...fetch,
  });
}
