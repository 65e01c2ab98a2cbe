// The fleet's section of the configuration (design §4.4): how a host is chosen, and when it is unhealthy.
import { type Env, int, oneOf } from '../platform/config.js';

/** The fleet of hosts (`SVC_FLEET_POLICY`, `SVC_HOST_*`; design §4.4). */
export interface FleetConfig {
  /** `pack` (default: the fullest host that fits) or `spread` (the emptiest). */
  policy: 'pack' | 'spread';
  /** How often each replica pings every host and records the heartbeat (`SVC_HOST_HEARTBEAT_MS`, 5000). */
  heartbeatMs: number;
  /** A host without a heartbeat this long is unhealthy (`SVC_HOST_UNHEALTHY_MS`, 30000). */
  unhealthyAfterMs: number;
}

/** The fleet's section of the configuration. */
export interface FleetSection {
  /** The fleet of Docker hosts: placement and health (design §4.4). */
  fleet: FleetConfig;
}

/**
 * The fleet's settings from `env`.
 *
 * @example
 * fleetSection({ SVC_FLEET_POLICY: 'spread' }).fleet.policy; // 'spread'
 */
export function fleetSection(env: Env): FleetSection {
  return {
    fleet: Object.freeze({
      policy: oneOf(env, 'SVC_FLEET_POLICY', ['pack', 'spread'] as const),
      heartbeatMs: int(env, 'SVC_HOST_HEARTBEAT_MS', 5000, 50, 600_000),
      unhealthyAfterMs: int(env, 'SVC_HOST_UNHEALTHY_MS', 30_000, 100, 3_600_000),
    }),
  };
}
