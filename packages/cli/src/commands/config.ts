import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { outputOptions, printResult } from '../output/print.js';
import { table } from '../output/table.js';
import { DEFAULT_PROFILE, profileName, readProfiles, writeProfiles } from '../profiles.js';
import { deleteSession, readSession } from '../session.js';

/**
 * `svc config …`: named profiles (a base address and credentials: a key file, or the profile's own
 * `svc login` session) kept in `config.json` (0600, in the 0700 config directory).
 *
 *   svc config set-profile staging --base-url https://staging.example/v1 --key-file ci.json
 *   svc config use staging          # the default from now on; `--profile` or SVC_PROFILE for one run
 *   svc config list
 *
 * @example
 * addConfigCommands(program, () => context);
 */
export function addConfigCommands(program: Command, context: () => Context): void {
  const config = program.command('config').description('Profiles: named base addresses and credentials.');

  config
    .command('set-profile')
    .summary('Create or change a profile (with the global --base-url, and --key-file)')
    .argument('<name>', 'profile name: letters, digits, - and _')
    .option('--key-file <path>', 'a service account key file for this profile (else it uses `svc login`)')
    .action(async (name: string, options: { keyFile?: string }) => {
      const ctx = context();
      const stored = readProfiles(ctx.configDir);
      const profile = { ...stored.profiles[profileName(name)] };
      if (ctx.baseUrlOption) profile.base_url = ctx.baseUrlOption.replace(/\/+$/, '');
      if (options.keyFile) profile.key_file = resolve(options.keyFile);
      await writeProfiles(ctx.configDir, { ...stored, profiles: { ...stored.profiles, [name]: profile } });
      ctx.io.stderr.write(`Profile ${name} saved.\n`);
    });

  config
    .command('use')
    .summary('Make a profile the default for later commands')
    .argument('<name>', 'profile name')
    .action(async (name: string) => {
      const ctx = context();
      const stored = readProfiles(ctx.configDir);
      if (profileName(name) !== DEFAULT_PROFILE && !stored.profiles[name])
        throw new CliError(
          'usage',
          'unknown_profile',
          `No profile ${name}: create it with \`svc config set-profile ${name} --base-url <url>\`.`,
        );
      await writeProfiles(ctx.configDir, { ...stored, current: name });
      ctx.io.stderr.write(`Using profile ${name}.\n`);
    });

  config
    .command('list')
    .summary('List the profiles (* marks the one in use)')
    .action(async (_options: unknown, self: Command) => {
      const ctx = context();
      const stored = readProfiles(ctx.configDir);
      const names = [...new Set([DEFAULT_PROFILE, ...Object.keys(stored.profiles)])];
      const rows = await Promise.all(
        names.map(async (name) => {
          const profile = stored.profiles[name] ?? {};
          const session = await readSession(ctx.configDir, name).catch(() => undefined);
          return {
            current: name === ctx.profile ? '*' : '',
            name,
            base_url: profile.base_url ?? session?.base_url ?? '',
            credentials: profile.key_file ? `key file ${profile.key_file}` : session ? 'session' : '',
          };
        }),
      );
      const output = outputOptions(self);
      if (output.format !== 'table' || output.query !== undefined) {
        await printResult(ctx, self, { profiles: rows }, output);
        return;
      }
      ctx.io.stdout.write(table(rows, { columns: ['current', 'name', 'base_url', 'credentials'] }));
    });

  config
    .command('delete-profile')
    .summary('Remove a profile and its stored session')
    .argument('<name>', 'profile name')
    .action(async (name: string) => {
      const ctx = context();
      const stored = readProfiles(ctx.configDir);
      const { [profileName(name)]: _removed, ...profiles } = stored.profiles;
      const next = { ...stored, profiles };
      if (next.current === name) delete next.current;
      await writeProfiles(ctx.configDir, next);
      await deleteSession(ctx.configDir, name);
      ctx.io.stderr.write(`Profile ${name} removed.\n`);
    });
}
