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
