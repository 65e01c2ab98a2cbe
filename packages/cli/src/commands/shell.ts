// `svc computers shell <workspace> <computer> [-- command]`: an interactive terminal on a running
// computer, as `ssh` or `docker exec -it` give one. The API's terminals underneath (`@svc/client/
// terminals`): the output stream's bytes to stdout, stdin's bytes as input, a resize on SIGWINCH, the
// remote exit code as svc's own. On a terminal the local one is in raw mode (every key goes to the
// program, Ctrl-C included) and restored on every way out; `Ctrl-] d` detaches.
import type { Command } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { CliError, RemoteExit } from '../exit-codes.js';
import type { TerminalIo } from '../io.js';
import { detachEscape } from '../terminal/escape.js';

/** The path whose operations `svc computers shell` calls; the command sits in that path's group. */
export const TERMINALS_PATH = '/workspaces/{workspace}/computers/{computer}/terminals';

/** The most bytes one input request carries (the spec's `x-svc-max-bytes` of the input body). */
const MAX_INPUT = 65_536;

const help = `
On a terminal, svc puts yours in raw mode: every key goes to the program in the computer (Ctrl-C
interrupts the program there, not svc), its output is drawn as it comes, and a resize of your window
resizes the remote one. svc exits with the program's exit code, as ssh does.

  svc computers shell dev box                      the login shell
  svc computers shell dev box -- python3           a Python prompt
  svc computers shell dev box --cwd /home/svc/src -- vim main.py
  svc computers shell dev box --attach 01m6r4h2q8t0v3x5z7b9d1f3g5j    come back to a detached terminal
  printf 'echo hi\\nexit 3\\n' | svc computers shell dev box; echo $?    prints the session, then 3

Detach: Ctrl-] then d leaves the program running and prints how to come back (Ctrl-] twice sends
one Ctrl-]). --attach replays the output the service keeps (the last 1 MiB), so the screen comes
back as it was, then goes on live; a terminal nobody reads or writes for 15 minutes is closed.

When stdin is not a terminal, svc types it into the program as it comes, then Ctrl-D (end of input)
when it ends, and waits for the program to exit. The terminal is 80x24 then unless --cols/--rows.
`;

/** The flags of `svc computers shell`. */
interface ShellFlags {
  attach?: string;
  cwd?: string;
  cols?: number;
  rows?: number;
}

/**
 * Adds `svc computers shell <workspace> <computer> [command...]` to the group of the terminal
 * operations.
 *
 * @example
 * addShellCommand(groups.get('computers'), () => context);
 */
export function addShellCommand(group: Command, context: () => Context): Command {
  return group
    .command('shell')
    .summary('Open an interactive terminal on a running computer (or --attach to one)')
    .description(
      `Open an interactive terminal on a running computer: its login shell, or the command after --.\n\nPOST ${TERMINALS_PATH}, then its …/output, …/input and a PATCH on resize.`,
    )
    .argument('<workspace>', 'the workspace id or name')
    .argument('<computer>', 'the computer id or name')
    .argument('[command...]', 'the program and its arguments, after -- (default: the login shell)')
    .option('--attach <terminal>', 'come back to this terminal (its id) instead of opening one')
    .option('--cwd <dir>', 'the absolute directory to start in (default: the home directory)')
    .option('--cols <n>', 'columns (default: your terminal’s, else 80)', positive('--cols'))
    .option('--rows <n>', 'rows (default: your terminal’s, else 24)', positive('--rows'))
    .addHelpText('after', help)
    .action(async (workspace: string, computer: string, command: string[], flags: ShellFlags) => {
      await shell(context(), workspace, computer, command, flags);
    });
}

function positive(name: string) {
  return (value: string) => {
    if (!/^[1-9][0-9]*$/.test(value))
      throw new CliError('usage', 'invalid_size', `${name}: a positive whole number, not "${value}".`);
    return Number(value);
  };
}

/** The terminal of stdin and stdout, when both are one: raw mode and its size. */
function localTerminal(context: Context): TerminalIo | undefined {
  const tty = context.io.terminal;
  return tty?.isTTY ? tty : undefined;
}

async function shell(
  context: Context,
  workspace: string,
  computer: string,
  command: string[],
  flags: ShellFlags,
): Promise<void> {
  const { getTerminal, openTerminal, readTerminal, resizeTerminal, writeTerminal } = await import(
    '@svc/client/terminals'
  );
  if (flags.attach !== undefined && command.length > 0)
    throw new CliError(
      'usage',
      'attach_with_command',
      '--attach takes no command: the terminal runs one already.',
    );
  const tty = localTerminal(context);
  const local = tty?.size();
  const size = { cols: flags.cols ?? local?.cols ?? 80, rows: flags.rows ?? local?.rows ?? 24 };
  const client = await apiClient(context);
  const terminal =
    flags.attach === undefined
      ? await openTerminal(client, workspace, computer, {
          ...size,
          ...(command.length > 0 ? { command } : {}),
          ...(flags.cwd === undefined ? {} : { cwd: flags.cwd }),
        })
      : await getTerminal(client, { workspace, computer, terminal: flags.attach });
  const ref = { workspace, computer, terminal: terminal.id };
  const { stdout, stderr } = context.io;
  const reattach = `svc computers shell ${workspace} ${computer} --attach ${terminal.id}`;

  const stop = new AbortController();
  const restore = tty ? rawMode(tty) : () => {};
  let detached = false;
  let disposeResize = () => {};
  try {
    if (tty && terminal.state === 'open') {
      if (flags.attach !== undefined && (terminal.cols !== size.cols || terminal.rows !== size.rows))
        await resizeTerminal(client, ref, size);
      disposeResize = tty.onResize(() => {
        const now = tty.size();
        if (now) resizeTerminal(client, ref, now).catch(() => undefined); // the next resize corrects it
      });
    }
    // Input: stdin's bytes, batched while a request is in flight, in order.
    const sender = inputSender((bytes) => writeTerminal(client, ref, bytes, { signal: stop.signal }));
    const detacher = tty ? detachEscape() : undefined;
    const input = (async () => {
      const iterator = context.io.stdin?.[Symbol.asyncIterator]();
      if (!iterator || terminal.state !== 'open') return;
      stop.signal.addEventListener('abort', () => iterator.return?.(), { once: true });
      for (;;) {
        const { done, value } = await iterator.next();
        if (done || stop.signal.aborted) break;
        const bytes = typeof value === 'string' ? new TextEncoder().encode(value) : value;
        if (!detacher) {
          sender.send(bytes);
          continue;
        }
        const { pass, detach } = detacher.feed(bytes);
        if (pass.byteLength > 0) sender.send(pass);
        if (detach) {
          detached = true;
          stop.abort();
          return;
        }
      }
      // Piped: the end of stdin is the end of input, as Ctrl-D at a terminal says it.
      if (!tty && !stop.signal.aborted) sender.send(Uint8Array.of(0x04));
      await sender.flush();
    })();
    input.catch((error: unknown) => {
      if (!stop.signal.aborted) stop.abort(error);
    });
    let exit: { exit_code?: number | undefined; reason: string } | undefined;
    try {
      for await (const e of readTerminal(client, ref, { signal: stop.signal })) {
        if (e.event === 'exit') exit = e.exit;
        else {
          if (e.skipped)
            stderr.write(
              `\r\n[svc: ${e.skipped} bytes of output lost: this shell fell further behind than the service keeps]\r\n`,
            );
          stdout.write(e.bytes);
        }
      }
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      if (!detached) throw stop.signal.reason;
    }
    stop.abort();
    if (detached || !exit) {
      // Only a detach ends the stream without its exit event: the reader returns after that event.
      restore();
      stderr.write(
        `\r\nDetached from terminal ${terminal.id}; it goes on running. Come back with:\r\n  ${reattach}\r\n`,
      );
      return;
    }
    restore();
    if (exit.exit_code === undefined)
      throw new CliError(
        'error',
        'terminal_ended',
        `The terminal ended (${exit.reason}) without an exit code.`,
      );
    if (exit.exit_code !== 0) throw new RemoteExit(exit.exit_code);
  } finally {
    stop.abort();
    disposeResize();
    restore();
  }
}

/**
 * Puts a terminal in raw mode; the function it returns restores it, once, whatever way svc leaves:
 * the command's end, an error, SIGTERM or SIGHUP (svc then exits as the signal would), or exit.
 */
function rawMode(tty: TerminalIo): () => void {
  tty.setRawMode(true);
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    tty.setRawMode(false);
    process.off('exit', restore);
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
  const handlers = (['SIGTERM', 'SIGHUP'] as const).map((signal) => {
    const handler = () => {
      restore();
      process.exit(128 + (signal === 'SIGTERM' ? 15 : 1));
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  process.once('exit', restore);
  return restore;
}

/** Sends input in order, one request at a time: bytes that come meanwhile go together in the next. */
function inputSender(write: (bytes: Uint8Array) => Promise<void>) {
  let pending: Uint8Array[] = [];
  let running: Promise<void> | undefined;
  let failure: unknown;
  const drain = async () => {
    while (pending.length > 0) {
      const all = Buffer.concat(pending);
      pending = [];
      for (let at = 0; at < all.byteLength; at += MAX_INPUT) await write(all.subarray(at, at + MAX_INPUT));
    }
  };
  const kick = () => {
    if (running || pending.length === 0) return;
    running = drain()
      .catch((error: unknown) => {
        failure = error;
        pending = [];
      })
      .finally(() => {
        running = undefined;
        kick();
      });
  };
  return {
    send(bytes: Uint8Array) {
      if (failure) throw failure;
      pending.push(bytes);
      kick();
    },
    async flush() {
      while (running) await running;
      if (failure) throw failure;
    },
  };
}
