// `svc computers cp`: files and directories between this machine and a running computer, by name, as
// `scp` and `docker cp` do. The API's byte operations underneath: a file as application/octet-stream,
// a directory as a tar archive (`@svc/client/files`).
import type { SvcClient } from '@svc/client';
import { type Command, Option } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { uploadLimit } from '../files/limits.js';
import { humanBytes } from '../files/progress.js';
import { parseRemote, type RemotePath } from '../files/remote.js';

import { outputOptions, printResult } from '../output/print.js';
import { commandTable } from '../spec/commands.js';
import { advise } from './advice.js';

/** The path whose operations `svc computers cp` calls; the command sits in that path's group. */
export const FILES_PATH = '/workspaces/{workspace}/computers/{computer}/files';

const help = (limit: string) => `
A remote path is <workspace>/<computer>:<absolute path>; the other side is a local path, or - for
svc's stdin or stdout. The computer must be running. Files may be written under /home only.

  svc computers cp notes.txt dev/box:/home/svc/           a file in (named notes.txt there)
  svc computers cp ./src dev/box:/home/svc/src            a directory in, as a tar archive
  svc computers cp dev/box:/home/svc/out ./out            a directory out, extracted here
  svc computers cp dev/box:/home/svc/log.txt -            a file to stdout
  tar -C src -c . | svc computers cp --archive - dev/box:/home/svc/src
  svc computers cp --archive dev/box:/home/svc/src - | tar -t

A local file keeps its permission bits unless --mode is given. A directory goes into the target
when it does not exist yet, else into a directory of its own name inside it. An archive that comes
back is extracted with the server's rules: no absolute names, no .., no devices, no links out of the
target. Uploads take at most ${limit} each. Progress shows on stderr when it is a terminal and the
transfer is over 1 MiB; when done, stderr says what moved, in how long and how fast. With -o json the
upload's answer (FileInfo, or the archive's count) is printed.
`;

/** The flags of `svc computers cp`. */
interface CopyFlags {
  mode?: string;
  parents?: boolean;
  archive?: boolean;
  idempotencyKey?: string;
}

/**
 * Adds `svc computers cp <source> <destination>` to the group of the files operations.
 *
 * @example
 * addCopyCommand(groups.get('computers'), () => context);
 */
export function addCopyCommand(group: Command, context: () => Context): Command {
  return group
    .command('cp')
    .summary('Copy files and directories to and from a running computer')
    .description(
      `Copy a file or a directory to or from a running computer (a directory travels as a tar archive).\n\nPUT/GET ${FILES_PATH}?path=… and …/files/archive?path=…`,
    )
    .argument('<source>', 'a local path, - (stdin), or <workspace>/<computer>:<path>')
    .argument('<destination>', 'a local path, - (stdout), or <workspace>/<computer>:<path>')
    .addOption(
      new Option(
        '--mode <mode>',
        "an uploaded file's permission bits (0644, 755); default: the local file's",
      ).argParser(parseMode),
    )
    .option('--parents', 'create missing parent directories in the computer, as mkdir -p does')
    .option('--archive', 'with -: stdin or stdout is a tar archive of a directory, not a file')
    .option('--idempotency-key <key>', 'the Idempotency-Key of the upload (repeat it to retry safely)')
    .addHelpText('after', () => {
      const limit = uploadLimit('file');
      return help(limit === undefined ? 'what the server allows' : humanBytes(limit));
    })
    .action(async (source: string, destination: string, flags: CopyFlags, command: Command) => {
      await copy(context(), command, source, destination, flags);
    });
}

function parseMode(value: string): string {
  if (!/^[0-7]{3,4}$/.test(value))
    throw new CliError(
      'usage',
      'invalid_mode',
      `--mode: three or four octal digits (0644, 755), not "${value}".`,
    );
  return value;
}

async function copy(
  context: Context,
  command: Command,
  source: string,
  destination: string,
  flags: CopyFlags,
): Promise<void> {
  const from = parseRemote(source);
  const to = parseRemote(destination);
  if (from && to)
    throw new CliError('usage', 'two_remotes', 'Copy between computers in two steps: to here, then there.');
  if (!from && !to)
    throw new CliError(
      'usage',
      'no_remote',
      'One side is <workspace>/<computer>:<absolute path>, e.g. dev/box:/home/svc/notes.txt.',
    );
  if (flags.archive && source !== '-' && destination !== '-')
    throw new CliError(
      'usage',
      'archive_needs_dash',
      '--archive is for - (stdin or stdout); a local directory is archived by itself.',
    );
  const output = outputOptions(command);
  const client = await apiClient(context);
  try {
    await transferBetween(context, command, client, { from, to, source, destination, flags, output });
  } catch (error) {
    // A workspace or computer not found gets the near names, as every command's does.
    const remote = (from ?? to) as RemotePath;
    const spec = commandTable().find((c) => c.operation.path === FILES_PATH && c.operation.method === 'get');
    if (spec)
      await advise(error, client, {
        spec,
        command,
        path: { workspace: remote.workspace, computer: remote.computer },
        query: {},
        header: {},
        body: undefined,
      });
    throw error;
  }
}

/** The copy itself, once the two sides are known. */
async function transferBetween(
  context: Context,
  command: Command,
  client: SvcClient,
  copy: {
    from: RemotePath | undefined;
    to: RemotePath | undefined;
    source: string;
    destination: string;
    flags: CopyFlags;
    output: ReturnType<typeof outputOptions>;
  },
): Promise<void> {
  const { from, to, source, destination, flags, output } = copy;
  const transfer = await import('../files/transfer.js');
  const kind = flags.archive ? 'archive' : 'file';
  const upload = { mode: flags.mode, parents: flags.parents, idempotencyKey: flags.idempotencyKey };
  if (to) {
    const answer =
      source === '-'
        ? await transfer.uploadStdin(context, client, to, kind, upload, true)
        : await transfer.uploadLocal(context, client, source, to, upload);
    if (output.format !== 'table' || output.query !== undefined)
      await printResult(context, command, answer, output);
    return;
  }
  if (!from) return;
  if (destination === '-') {
    const info = flags.archive ? undefined : await transfer.statRemote(client, from);
    if (info?.type === 'directory')
      throw new CliError(
        'usage',
        'is_a_directory',
        `${from.path} is a directory: add --archive to write it to stdout as a tar archive.`,
      );
    return transfer.downloadStdout(context, client, from, kind, true);
  }
  await transfer.downloadLocal(context, client, from, destination);
}
