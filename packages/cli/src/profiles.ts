import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './exit-codes.js';
import { writePrivateFile } from './private-file.js';

/** The profile used when none is chosen; its session is `session.json`, as before profiles. */
export const DEFAULT_PROFILE = 'default';

/** A named context: which service, and which credentials (a key file, or the profile's own `svc login`). */
export interface Profile {
  base_url?: string;
  /** A service account's key file; without one the profile uses its browser session. */
  key_file?: string;
}

/** `config.json` in the config directory (0600). */
export interface ProfilesConfig {
  current?: string;
  profiles: Record<string, Profile>;
}

const FILE = 'config.json';
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/**
 * Checks a profile name (it names a file): letters, digits, `-` and `_`, at most 63.
 *
 * @example
 * profileName('work'); // 'work'
 */
export function profileName(name: string): string {
  if (!NAME.test(name))
    throw new CliError(
      'usage',
      'invalid_profile',
      `Profile names are letters, digits, - and _ (at most 63), not "${name}".`,
    );
  return name;
}

/**
 * Reads the profiles (synchronously: it is small and every command needs it before anything else).
 *
 * @example
 * const { current, profiles } = readProfiles(configDir(process.env));
 */
export function readProfiles(dir: string): ProfilesConfig {
  let text: string;
  try {
    text = readFileSync(join(dir, FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<ProfilesConfig>;
    return { ...value, profiles: value.profiles ?? {} };
  } catch {
    throw new CliError('usage', 'invalid_config', `${join(dir, FILE)} is not valid JSON: fix or remove it.`);
  }
}

/**
 * Stores the profiles, 0600 in the 0700 config directory.
 *
 * @example
 * await writeProfiles(dir, { current: 'work', profiles: { work: { base_url: 'https://api.example/v1' } } });
 */
export async function writeProfiles(dir: string, config: ProfilesConfig): Promise<void> {
  await writePrivateFile(dir, FILE, `${JSON.stringify(config, null, 2)}\n`);
}

/**
 * The profile of a run: `--profile`, else `SVC_PROFILE`, else the one `svc config use` chose, else `default`.
 *
 * @example
 * selectProfile('work', {}, { profiles: {} }); // 'work'
 */
export function selectProfile(
  option: string | undefined,
  env: Record<string, string | undefined>,
  config: ProfilesConfig,
): string {
  return profileName(option || env.SVC_PROFILE || config.current || DEFAULT_PROFILE);
}
