// The readers every section of the configuration is read with, and their one error. Each feature's
// folder reads its own variables in its config.ts (terminals/config.ts, webhooks/config.ts, …; the
// server's own in server-config.ts); compose/config.ts makes them the whole `Config`.

/** A bad environment value. Start-up stops with this message; nothing is guessed. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The environment a configuration is read from (`process.env`, or a test's). */
export type Env = Record<string, string | undefined>;

/**
 * The whole number `name` sets, `fallback` when unset or empty; anything else, or one outside
 * `min`–`max`, is a {@link ConfigError} naming the variable.
 *
 * @example
 * int({ PORT: '9000' }, 'PORT', 8080, 0, 65535); // 9000
 */
export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/**
 * One of `values`, named by `name`; the first of `values` is the default.
 *
 * @example
 * oneOf({ SVC_READ_CACHE: 'off' }, 'SVC_READ_CACHE', ['on', 'off'] as const); // 'off'
 */
export function oneOf<T extends string>(env: Env, name: string, values: readonly [T, ...T[]]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return values[0];
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

/**
 * A switch that is on only when `name` is `1` or `true`.
 *
 * @example
 * flag({ SVC_SANDBOX: '1' }, 'SVC_SANDBOX'); // true
 */
export function flag(env: Env, name: string): boolean {
  const raw = env[name];
  return raw === '1' || raw === 'true';
}

/**
 * Resource quotas of design §11, each its own variable with its default (0 – 1,000,000): a feature
 * names those it enforces.
 *
 * @example
 * quotas({}, { labelsPerComputer: ['SVC_QUOTA_LABELS_PER_COMPUTER', 32] }); // { labelsPerComputer: 32 }
 */
export function quotas<K extends string>(
  env: Env,
  variables: Record<K, [name: string, fallback: number]>,
): Record<K, number> {
  const entries = Object.entries(variables) as [K, [string, number]][];
  return Object.fromEntries(
    entries.map(([key, [name, fallback]]) => [key, int(env, name, fallback, 0, 1_000_000)]),
  ) as Record<K, number>;
}
