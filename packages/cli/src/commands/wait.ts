import type { ComputerState } from '@svc/client';
import { type Command, Option } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { printResult } from '../output/print.js';
import { parseNumber } from './operation.js';
import { waitForSuccess } from './waiting.js';

/** The path `@svc/client` long-polls to wait; `svc <its group> wait` sits beside its `get`. */
export const WAIT_PATH = '/operations/{operation}';

/**
 * `svc ops wait <operation…>`: waits for operations started earlier (by id) to finish, with progress
 * on a terminal, and prints their final records; exits 1 with the operation's error if one failed.
 *
 * @example
 * addWaitCommand(groups.get('operations'), () => context);
 */
export function addWaitCommand(group: Command, context: () => Context): void {
  group
    .command('wait')
    .summary('Wait for operations to finish')
    .description('Wait for operations to finish, showing progress on a terminal; exit 1 if one failed.')
    .argument('<operation...>', 'operation ids')
    .addOption(
      new Option('--timeout <seconds>', 'give up waiting after this long')
        .default(600)
        .argParser(parseNumber('integer')),
    )
    .action(async (ids: string[], options: { timeout: number }, self: Command) => {
      const ctx = context();
      const client = await apiClient(ctx);
      const operations = await waitForSuccess(ctx, client, ids, options.timeout);
      printResult(ctx, self, { operations });
    });
}

/** The path `@svc/client` long-polls to wait for a computer's state (`?wait_for=`); `svc computers wait` sits beside its `get`. */
export const COMPUTER_WAIT_PATH = '/workspaces/{workspace}/computers/{computer}';

/**
 * `svc computers wait <workspace> <computer> --for running,failed`: waits, one long-poll request per
 * minute at most, until the computer is in one of the states (`waitForComputerState`), and prints it;
 * exits with the timeout's code if `--timeout` passes first.
 *
 * @example
 * addComputerWaitCommand(groups.get('computers'), () => context);
 */
export function addComputerWaitCommand(group: Command, context: () => Context): void {
  group
    .command('wait')
    .summary("Wait for a computer's state")
    .description(
      'Wait until the computer is in one of the states named by --for (comma-separated), then print it.\n' +
        'The server answers the moment the state holds (GET …/computers/{computer}?wait_for=…&wait=60).',
    )
    .argument('<workspace>', 'the workspace id or name')
    .argument('<computer>', 'the computer id or name')
    .requiredOption('--for <states>', 'computer states, comma-separated (running,failed)')
    .addOption(
      new Option('--timeout <seconds>', 'give up waiting after this long')
        .default(600)
        .argParser(parseNumber('integer')),
    )
    .action(
      async (
        workspace: string,
        computer: string,
        options: { for: string; timeout: number },
        self: Command,
      ) => {
        const ctx = context();
        const client = await apiClient(ctx);
        const { waitForComputerState } = await import('@svc/client');
        const states = options.for.split(',').filter(Boolean) as ComputerState[];
        const found = await waitForComputerState(client, { workspace, computer }, states, {
          timeoutMs: options.timeout * 1000,
        });
        printResult(ctx, self, { computer: found });
      },
    );
}
