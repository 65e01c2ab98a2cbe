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
    .summary('Show the credentials in use and check them (GET /me)')
    .description(
      'Show the profile, base address and credentials this run would use, then check them with GET /me.\nExit 3 when there are none or the server refuses them.',
    )
    .action(async (_options: unknown, self: Command) => {
      const ctx = context();
      const status: Record<string, unknown> = { profile: ctx.profile };
      const session = await readSession(ctx.configDir, ctx.profile).catch(() => undefined);
      if (ctx.io.env.SVC_ACCESS_TOKEN) status.credentials = 'SVC_ACCESS_TOKEN';
      else if (ctx.keyFilePath) {
        const { readKeyFile } = await import('@svc/client/node');
        const keyFile = await readKeyFile(ctx.keyFilePath);
        status.credentials = `key file ${ctx.keyFilePath}`;
        status.key_id = keyFile.key_id;
        status.base_url = resolveBaseUrl(ctx, { keyFile });
      } else if (session) {
        status.credentials = `session ${sessionPath(ctx.configDir, ctx.profile)}`;
        if (session.expires_at) status.access_token_expires_at = session.expires_at;
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
      const output = outputOptions(self);
      if (output.format !== 'table' || output.query !== undefined) {
        await printResult(ctx, self, status, output);
        return;
      }
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
