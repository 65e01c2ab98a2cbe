import type { Command } from 'commander';
import { apiClient, type Context, refreshSession, resolveBaseUrl } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { outputOptions, printResult } from '../output/print.js';
import { render } from '../output/render.js';
import { signinUrl } from '../paths.js';
import { deleteSession, readSession, sessionPath, writeSession } from '../session.js';
import { exchangeToken } from '../token-exchange.js';

/** The client id of `svc` at the embedded sign-in. */
export const CLIENT_ID = 'svc-cli';

/**
 * `svc login`: browser sign-in with a loopback redirect and PKCE S256 (RFC 8252): a listener on
 * 127.0.0.1 on a free port, the sign-in page opened (and its address always printed), the code
 * exchanged at POST /auth/token, the session stored (0600), the access token printed.
 *
 * @example
 * program.addCommand(loginCommand(() => context));
 */
export function addSessionCommands(program: Command, context: () => Context): void {
  program
    .command('login')
    .description('sign in through the browser and store the session; prints an access token')
    .option('--no-browser', 'do not open a browser; only print the sign-in address')
    .option('-q, --quiet', 'print nothing on success')
    .option('--timeout <seconds>', 'give up waiting for the sign-in after this long', '300')
    .action(async (options: { browser: boolean; quiet?: boolean; timeout: string }) => {
      const ctx = context();
      // Loaded here: importing node:http (the loopback) alone costs start-up tens of milliseconds.
      const [{ openBrowser }, { startLoopback }, { createPkce, newState }] = await Promise.all([
        import('../browser.js'),
        import('../loopback.js'),
        import('../pkce.js'),
      ]);
      const previous = await readSession(ctx.configDir, ctx.profile).catch(() => undefined);
      const baseUrl = resolveBaseUrl(ctx, { session: previous });
      const { verifier, challenge } = createPkce();
      const state = newState();
      const loopback = await startLoopback({ state, timeoutMs: Number(options.timeout) * 1000 });
      try {
        const url = signinUrl(baseUrl);
        url.search = new URLSearchParams({
          response_type: 'code',
          client_id: CLIENT_ID,
          redirect_uri: loopback.redirectUri,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state,
        }).toString();
        ctx.io.stderr.write(
          `Sign in at this address (it opens in your browser when one is available):\n\n  ${url.href}\n\nWaiting for the sign-in…\n`,
        );
        if (options.browser)
          await (ctx.io.openBrowser ?? ((u: string) => openBrowser(u, ctx.io.env)))(url.href).catch(() => {});
        const code = await loopback.code;
        const token = await exchangeToken({
          baseUrl,
          credential: code,
          body: {
            grant_type: 'authorization_code',
            code_verifier: verifier,
            redirect_uri: loopback.redirectUri,
          },
          fetch: ctx.io.fetch,
        });
        if (!token.refresh_token)
          throw new CliError(
            'authentication',
            'no_refresh_token',
            'The server did not return a refresh token.',
          );
        await writeSession(
          ctx.configDir,
          {
            base_url: baseUrl,
            refresh_token: token.refresh_token,
            access_token: token.access_token,
            expires_at: token.expires_at,
            updated_at: new Date(ctx.now()).toISOString(),
          },
          ctx.profile,
        );
        if (!options.quiet) {
          ctx.io.stderr.write(`Signed in. Session stored in ${sessionPath(ctx.configDir, ctx.profile)}.\n`);
          ctx.io.stdout.write(`${token.access_token}\n`);
        }
      } finally {
        await loopback.close();
      }
    });

  program
    .command('token')
    .description(
      "print a valid access token: from SVC_KEY_FILE (or the profile's key file), else by refreshing the stored session",
    )
    .action(async () => {
      const ctx = context();
      if (ctx.keyFilePath) {
        const { readKeyFile } = await import('@svc/client/node');
        const keyFile = await readKeyFile(ctx.keyFilePath);
        const client = await apiClient(ctx);
        const token = await client.accessToken();
        if (!token) throw new CliError('authentication', 'no_token', `No token for key ${keyFile.key_id}.`);
        ctx.io.stdout.write(`${token}\n`);
        return;
      }
      const { access_token } = await refreshSession(ctx, { force: true });
      ctx.io.stdout.write(`${access_token}\n`);
    });

  program
    .command('logout')
    .description('forget the stored session (also `svc auth logout`)')
    .action(logout(context));

  program
    .command('whoami')
    .description('who the credentials belong to, and their workspaces and roles (GET /me)')
    .action(async (_options: unknown, self: Command) => {
      const ctx = context();
      const client = await apiClient(ctx);
      const { unwrap } = await import('@svc/client');
      const data = await unwrap(client.GET('/me'));
      const output = outputOptions(self);
      if (output.format !== 'table' || output.query !== undefined || output.columns) {
        await printResult(ctx, self, data, output);
        return;
      }
      const { principal, workspaces } = data.identity;
      const who = principal.display_name || principal.name;
      const email = 'email' in principal && principal.email ? ` <${principal.email}>` : '';
      ctx.io.stdout.write(`${who}${email} (${principal.kind} ${principal.id})\n`);
      ctx.io.stdout.write(
        workspaces.length === 0
          ? 'no workspaces\n'
          : `\n${render({ workspaces, next_cursor: null, has_more: false }, { width: ctx.io.columns ?? 80 }).stdout}`,
      );
    });
}

/**
 * The action of `svc logout` and `svc auth logout`: forgets the profile's stored session.
 *
 * @example
 * program.command('logout').action(logout(() => context));
 */
export function logout(context: () => Context): () => Promise<void> {
  return async () => {
    const ctx = context();
    const removed = await deleteSession(ctx.configDir, ctx.profile);
    ctx.io.stderr.write(
      removed ? `Signed out: the session of profile ${ctx.profile} was removed.\n` : 'Not signed in.\n',
    );
  };
}
