// The whole configuration: each feature reads its own section of the environment (its variables,
// defaults and bounds, in its folder's config.ts) with the shared readers of platform/config.ts;
// composing them is wiring, so it is done here, above every feature.
import { type ComputersSection, computersSection } from '../computers/config.js';
import { type DockerSection, dockerSection } from '../computers/docker/config.js';
import { type FilesSection, filesSection } from '../computers/files/config.js';
import { type FleetSection, fleetSection } from '../fleet/config.js';
import { type IdentitySection, identitySection } from '../identity/config.js';
import type { Env } from '../platform/config.js';
import { type ServerSection, serverSection } from '../platform/server-config.js';
import { type StreamsSection, streamsSection } from '../streams/config.js';
import { type TerminalsSection, terminalsSection } from '../terminals/config.js';
import { type WebhooksSection, webhooksSection } from '../webhooks/config.js';

export { ConfigError } from '../platform/config.js';

/**
 * Everything the server reads from its environment, parsed and checked once at start-up: every
 * feature's section side by side (their `quotas` merged into one).
 */
export type Config = ServerSection &
  IdentitySection &
  ComputersSection &
  FilesSection &
  DockerSection &
  FleetSection &
  WebhooksSection &
  StreamsSection &
  TerminalsSection;

/** Resource quotas of design §11, each its own environment variable: every feature's together. */
export type Quotas = Config['quotas'];

/**
 * Reads the whole configuration from `env` (default `process.env`). `sandbox` (the `--sandbox` flag)
 * keeps data in memory unless `DATABASE_URL` is set.
 *
 * @example
 * const config = loadConfig({ PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
 * console.log(config.baseUrl); // 'http://127.0.0.1:0/v1'
 */
export function loadConfig(env: Env = process.env, options: { sandbox?: boolean } = {}): Readonly<Config> {
  const server = serverSection(env, options);
  const identity = identitySection(env, server);
  const computers = computersSection(env);
  const webhooks = webhooksSection(env);
  return Object.freeze({
    ...server,
    ...identity,
    ...computers,
    ...filesSection(env),
    ...dockerSection(env),
    ...fleetSection(env),
    ...webhooks,
    ...streamsSection(env),
    ...terminalsSection(env),
    quotas: Object.freeze({ ...computers.quotas, ...identity.quotas, ...webhooks.quotas }),
  });
}
