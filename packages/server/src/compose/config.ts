// The whole configuration: each feature reads its own section of the environment (its variables,
// defaults and bounds, in its folder's config.ts) with the shared readers of platform/config.ts;
// composing them is wiring, so it is done here, above every feature.
import { type BaseConfig, baseConfig, type Env } from '../platform/config.js';
import { type TerminalsSection, terminalsSection } from '../terminals/config.js';

export { ConfigError } from '../platform/config.js';

/** Everything the server reads from its environment, parsed and checked once at start-up. */
export type Config = BaseConfig & TerminalsSection;

/**
 * Reads the whole configuration from `env` (default `process.env`). `sandbox` (the `--sandbox` flag)
 * keeps data in memory unless `DATABASE_URL` is set.
 *
 * @example
 * const config = loadConfig({ PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
 * console.log(config.baseUrl); // 'http://127.0.0.1:0/v1'
 */
export function loadConfig(env: Env = process.env, options: { sandbox?: boolean } = {}): Readonly<Config> {
  return Object.freeze({ ...baseConfig(env, options), ...terminalsSection(env) });
}
