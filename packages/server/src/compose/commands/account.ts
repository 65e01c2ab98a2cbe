import { parseArgs } from 'node:util';
import { hasPrincipals } from '../../identity/repositories/principals.js';
import { LocalAccountError, setLocalAccount } from '../../identity/signin/accounts.js';
import { ConfigError, loadConfig } from '../config.js';
import { openServerDatabase } from '../database.js';

/** Where `svc-server account` reads and writes; `main.ts` passes the process's, tests their own. */
export interface AccountCommandIo {
  /** The password comes from here, never from an argument (arguments show in `ps` and shell history). */
  stdin: AsyncIterable<string | Buffer> & { isTTY?: boolean };
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** DATABASE_URL or SVC_DATA_DIR pick the database, as for the server itself. */
  env: Record<string, string | undefined>;
}

/** The help of `svc-server account`. */
export const ACCOUNT_USAGE = `Usage: svc-server account set <email> [--name <name>] --password-stdin

Creates a local (browser sign-in) account, or resets the password of an existing one (which also
signs out all of its sessions). The password is read from stdin, e.g.
  printf '%s' "$PASSWORD" | svc-server account set ada@example.com --password-stdin
Database: DATABASE_URL, else PGlite under SVC_DATA_DIR (default .svc/data); with PGlite, stop the
server first (its files are one process's at a time).

Options:
  --name <name>       the user's principal name, a DNS label (default: from the email)
  --password-stdin    read the password from stdin (required; one trailing newline is dropped)
`;

class UsageError extends Error {}

/**
 * `svc-server account set <email> [--name <name>] --password-stdin`: {@link setLocalAccount} against
 * the configured database. Returns the exit code: 0 done, 1 refused (bad input, empty database, no
 * database), 2 usage. The password is never printed.
 *
 * @example
 * const code = await runAccountCommand(['set', 'ada@example.com', '--password-stdin'], {
 *   stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env,
 * });
 */
export async function runAccountCommand(argv: readonly string[], io: AccountCommandIo): Promise<number> {
  let email: string;
  let name: string | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: {
        name: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
    if (values.help) {
      io.stdout.write(ACCOUNT_USAGE);
      return 0;
    }
    const [verb, address, ...extra] = positionals;
    if (verb !== 'set') throw new UsageError(verb ? `unknown command: account ${verb}` : 'missing command');
    if (!address) throw new UsageError('missing <email>');
    if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`);
    if (!values['password-stdin'])
      throw new UsageError('pass the password on stdin with --password-stdin (never as an argument)');
    if (io.stdin.isTTY)
      throw new UsageError('stdin is a terminal: pipe the password in (a terminal would echo it)');
    email = address;
    name = values.name;
  } catch (error) {
    // UsageError, or parseArgs's own (an unknown option, --name without a value)
    io.stderr.write(`svc-server account: ${(error as Error).message}\n\n${ACCOUNT_USAGE}`);
    return 2;
  }

  const password = (await readAll(io.stdin)).replace(/\r?\n$/, '');
  try {
    const db = await openServerDatabase(loadConfig(io.env, { sandbox: false }));
    try {
      // Bootstrap runs only on a database without principals: an account added first would stop the
      // server from ever creating its owner, workspace and key file.
      if (!(await hasPrincipals(db)))
        throw new LocalAccountError(
          'the database is empty: start svc-server once first (it creates the owner account, a workspace and the key file), then add accounts',
        );
      const account = await setLocalAccount(db, { email, password, ...(name ? { name } : {}) });
      io.stdout.write(
        account.created
          ? `Created the local account ${account.username} (user ${account.principalId}); sign in with svc login.\n`
          : `Reset the password of ${account.username} (user ${account.principalId}); its sessions are signed out.\n`,
      );
      return 0;
    } finally {
      await db.close();
    }
  } catch (error) {
    const known = error instanceof LocalAccountError || error instanceof ConfigError;
    io.stderr.write(`svc-server account: ${known ? '' : 'failed: '}${(error as Error).message}\n`);
    return 1;
  }
}

async function readAll(stream: AsyncIterable<string | Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
