// `svc` as a user gets it: scripts/install-global.mjs (what `pnpm cli:install` runs after the build)
// packs the built package with `pnpm pack` and installs the tarball with `npm install -g`, here into a
// scratch prefix. Tests that run this binary run what ships, not the sources.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The package's directory. */
export const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));

/** An installed `svc`. */
export interface InstalledCli {
  /** The npm prefix it is installed in: `bin/svc`, `lib/node_modules/@svc/cli`. */
  prefix: string;
  /** `<prefix>/bin/svc`, the link npm made to the package's `bin`. */
  bin: string;
  /** What the install wrote on stderr (npm's warnings, the script's last words). */
  stderr: string;
  /** Removes the prefix. */
  remove(): Promise<void>;
}

/**
 * Packs the built CLI and installs the tarball globally into a new temporary npm prefix, as `pnpm
 * cli:install --prefix <dir>` does (without building: turbo builds before this package's tests).
 * `env` is the script's environment (default this process's); `prefix` an empty directory to use.
 *
 * @example
 * const cli = await installPacked();
 * execFileSync(cli.bin, ['--version']);
 * await cli.remove();
 */
export async function installPacked(
  env: NodeJS.ProcessEnv = process.env,
  prefix?: string,
): Promise<InstalledCli> {
  prefix ??= await mkdtemp(join(tmpdir(), 'svc-global-'));
  const { stderr } = await promisify(execFile)(
    process.execPath,
    [join(PACKAGE, 'scripts', 'install-global.mjs'), '--prefix', prefix],
    { cwd: PACKAGE, env, encoding: 'utf8' },
  );
  return {
    prefix,
    bin: join(prefix, 'bin', 'svc'),
    stderr,
    remove: () => rm(prefix as string, { recursive: true, force: true }),
  };
}

/** How a run of the installed `svc` ended. */
export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the installed `svc` (`bin`) with exactly `env` to its end; never rejects.
 *
 * @example
 * const { code, stdout } = await runInstalled(cli.bin, env, ['whoami', '-o', 'json']);
 */
export function runInstalled(bin: string, env: Record<string, string>, argv: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(bin, argv, { env, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}
