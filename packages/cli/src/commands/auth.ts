import type { SvcClient } from '@svc/client';
import type { Command } from 'commander';
import { apiClient, type Context, resolveBaseUrl } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { outputOptions, printResult } from '../output/print.js';
import { fields } from '../output/table.js';
import { readSession, sessionPath } from '../session.js';
import { logout } from './session.js';

/** The group of the credential commands; the spec's `auth` tag (POST /auth/token) shares it. */
export const AUTH_GROUP = 'auth';

/**
 * `svc auth status` (which profile, which credentials, whether the server accepts them),
 * `svc auth assertion` (a signed assertion from the key file, for `curl` and `redocly respect`),
 * `svc auth logout`.
 *
 * @example
 * addAuthCommands(groups.get('auth'), () => context);
 */
export function addAuthCommands(group: Command, context: () => Context): void {
  group
    .command('status')
    .summary('Show the credentials in use, when each expires, and check them (as svc whoami)')
    .description(
      'Show the profile, base address and credentials this run would use and when each expires (the\n' +
        "access token; with a key file, the token it mints and the key's own expiry; with a session, the\n" +
        'refresh token), then check them as `svc whoami` does. Exit 3 when there are none or the server\n' +
        'refuses them.',
    )
    .action(async (_options: unknown, self: Command) => {
      const ctx = context();
      const status: Record<string, unknown> = { profile: ctx.profile };
      let keyId: string | undefined;
      if (ctx.io.env.SVC_ACCESS_TOKEN) status.credentials = 'SVC_ACCESS_TOKEN';
      else if (ctx.keyFilePath) {
        const { readKeyFile } = await import('@svc/client/node');
        const keyFile = await readKeyFile(ctx.keyFilePath);
        status.credentials = `key file ${ctx.keyFilePath}`;
        status.key_id = keyId = keyFile.key_id;
        status.base_url = resolveBaseUrl(ctx, { keyFile });
      } else {
        const session = await readSession(ctx.configDir, ctx.profile).catch(() => undefined);
        if (session) status.credentials = `session ${sessionPath(ctx.configDir, ctx.profile)}`;
      }
      const client = await apiClient(ctx);
      status.base_url = client.baseUrl;
      const { unwrap } = await import('@svc/client');
      const { identity } = await unwrap(client.GET('/me'));
      const { principal } = identity;
      status.signed_in_as = {
        kind: principal.kind,
        id: principal.id,
        name: principal.display_name || principal.name,
        ...('email' in principal && principal.email ? { email: principal.email } : {}),
      };
      status.workspaces = identity.workspaces.length;
      // When each credential ends: read after GET /me, which may have minted or refreshed the token.
      if (ctx.io.env.SVC_ACCESS_TOKEN) status.access_token = tokenTimes(ctx.io.env.SVC_ACCESS_TOKEN);
      else if (keyId) {
        const minted = tokenTimes((await client.accessToken()) ?? '');
        if (minted) status.access_token = { ...minted, renewed: 'from the key file, before it expires' };
        status.key = { id: keyId, ...(await keyExpiry(client, keyId, principal, identity.workspaces)) };
      } else {
        const session = await readSession(ctx.configDir, ctx.profile).catch(() => undefined);
        if (session?.access_token || session?.expires_at)
          status.access_token = {
            ...(tokenTimes(session.access_token ?? '') ?? {}),
            ...(session.expires_at ? { expires_at: session.expires_at } : {}),
            renewed: 'with the refresh token, before it expires',
          };
        // The token answer carries no expiry for the refresh token, and the spec states none.
        if (session)
          status.refresh_token = { expires_at: 'not told by the server; `svc login` again if it is refused' };
      }
      const output = outputOptions(self);
      if (output.format !== 'table' || output.query !== undefined) {
        await printResult(ctx, self, status, output);
        return;
      }
      const key = status.key as { expires_at?: unknown } | undefined;
      if (key?.expires_at === null) key.expires_at = 'never';
      ctx.io.stdout.write(fields(status).text);
    });

  group
    .command('assertion')
    .summary('Print a signed assertion for POST /auth/token (for curl, redocly respect)')
    .description(
      'Print a signed assertion (RFC 7523, valid 5 minutes, usable once) made with the key file of\n' +
        'SVC_KEY_FILE, the profile or --key-file, for tools that exchange it themselves:\n\n' +
        '  curl -X POST "$BASE/auth/token" -H "Authorization: Bearer $(svc auth assertion)" \\\n' +
        '       -H "Content-Type: application/json" -d \'{"grant_type":"urn:ietf:params:oauth:grant-type:jwt-bearer"}\'',
    )
    .option('--key-file <path>', 'the key file (default: SVC_KEY_FILE, else the profile’s)')
    .action(async (options: { keyFile?: string }) => {
      const ctx = context();
      const path = options.keyFile ?? ctx.keyFilePath;
      if (!path)
        throw new CliError(
          'authentication',
          'no_key_file',
          'An assertion needs a key file: pass --key-file, set SVC_KEY_FILE, or use a profile with one (`svc config set-profile <name> --key-file <path>`).',
        );
      const { createAssertion, readKeyFile } = await import('@svc/client/node');
      const keyFile = await readKeyFile(path);
      const baseUrl = resolveBaseUrl(ctx, { keyFile });
      ctx.io.stdout.write(`${await createAssertion(keyFile, { baseUrl, now: ctx.now() })}\n`);
    });

  group.command('logout').summary('Forget the stored session (as `svc logout`)').action(logout(context));
}

/**
 * When a JWT access token expires and how long it lives (its `exp` and `iat`); undefined when it is not
 * a JWT with both.
 *
 * @example
 * tokenTimes(token); // { expires_at: '2026-11-26T10:15:00.000Z', lifetime_seconds: 900 }
 */
export function tokenTimes(token: string): { expires_at: string; lifetime_seconds: number } | undefined {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      iat?: unknown;
      exp?: unknown;
    };
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return undefined;
    return {
      expires_at: new Date(claims.exp * 1000).toISOString(),
      lifetime_seconds: claims.exp - claims.iat,
    };
  } catch {
    return undefined;
  }
}

/** How many of the caller's workspaces are asked for a service account's key (it belongs to one). */
const KEY_LOOKUPS = 3;

/**
 * A service account key's own expiry, as the API lists it (`expires_at`, `null` when it never
 * expires), asked of the account's workspaces (a few at most); in words when no answer says.
 */
async function keyExpiry(
  client: SvcClient,
  keyId: string,
  principal: { id: string; kind: string },
  workspaces: readonly { id: string }[],
): Promise<{ expires_at: string | null; state?: string }> {
  const unknown = { expires_at: "unknown: these credentials may not list the service account's keys" };
  if (principal.kind !== 'service_account') return unknown;
  for (const workspace of workspaces.slice(0, KEY_LOOKUPS)) {
    const answer = await client
      .GET('/workspaces/{workspace}/service-accounts/{service_account}/keys', {
        params: { path: { workspace: workspace.id, service_account: principal.id } },
      })
      .catch(() => undefined);
    const key = answer?.data?.keys.find((k) => k.id === keyId);
    if (key) return { expires_at: key.expires_at ?? null, state: key.state };
  }
  return unknown;
}
